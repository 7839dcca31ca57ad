// Package pgxpool holds the tests of pgx v5's pgxpool package, copied from
// the pgx module by ../sync.sh with only their import changed to
// github.com/actorpool/actorpool/pgpool, under the name pgxpool: they prove
// that pgpool is a drop-in for pgxpool. removed.txt lists the tests that
// cannot compile outside the pgx module, and skipped.txt those that test
// a behaviour pgpool changes on purpose, each with why. The copied files
// keep pgx's MIT license (LICENSE).
//
// Run them against a PostgreSQL server:
//
//	PGX_TEST_DATABASE=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//		go test -race -skip "$(./skip.sh)" ./pgxpool
package pgxpool
