module github.com/actorpool/actorpool

go 1.26
