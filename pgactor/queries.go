package pgactor

import "fmt"

// queries are the statements of sql.go with the schema filled in, made
// once per actor.
type queries struct {
	send, sendNotify           string
	sendBatch, sendBatchNotify string
	liveKey                    string
	fetch                      string
	complete, completeOne      string
	retry, deadLetter          string
	heartbeat, giveBack        string
	stats, deadLetters         string
	replay, deleteDeadLetters  string
	cancelWaiting              string
	cancelRunning              string
	maintainElect, fold        string
	maintainDone               string
}

func newQueries(schema string) queries {
	x := func(sql string) string { return expand(schema, sql) }
	return queries{
		send:              x(sqlSend + sqlSendTail),
		sendNotify:        x(sqlSend + fmt.Sprintf(sqlSendNotifyTail, 8)),
		sendBatch:         x(sqlSendBatch + sqlSendTail),
		sendBatchNotify:   x(sqlSendBatch + fmt.Sprintf(sqlSendNotifyTail, 7)),
		liveKey:           x(sqlLiveKey),
		fetch:             x(sqlFetch),
		complete:          x(sqlComplete),
		completeOne:       x(sqlCompleteOne),
		retry:             x(sqlRetry),
		deadLetter:        x(sqlDeadLetter),
		heartbeat:         x(sqlHeartbeat),
		giveBack:          x(sqlGiveBack),
		stats:             x(sqlStats),
		deadLetters:       x(sqlDeadLetters),
		replay:            x(sqlReplay),
		deleteDeadLetters: x(sqlDeleteDeadLetters),
		cancelWaiting:     x(sqlCancelWaiting),
		cancelRunning:     x(sqlCancelRunning),
		maintainElect:     x(sqlMaintainElect),
		fold:              x(sqlFold),
		maintainDone:      x(sqlMaintainDone),
	}
}
