package pgactor

import (
	"errors"
	"fmt"
	"time"
)

// UniqueFor refuses the send, with a [*DuplicateError] naming the first
// task, when a task of the actor with the same key was sent in the same
// period: at most one task per key per period, whether that task still
// waits, runs, completed or was dead-lettered. Periods are the multiples
// of period since the Unix epoch — PostgreSQL's date_bin(period, t,
// 'epoch') — and a send belongs to the period its time falls in, by the
// database's clock (not its RunAt or After): with period an hour, to the
// clock hour. The next period accepts the key again. Its row in the
// unique_periods table is deleted by maintenance once the period has
// ended.
//
// In SendTx the key is taken by the caller's transaction: a second send
// waits for it, and is accepted if it rolls back. SendBatch refuses it,
// as every task of a batch would have the same key; so does a send that
// also has UniqueKey. The period must be at least a microsecond.
func UniqueFor(key string, period time.Duration) SendOption {
	return func(o *sendOptions) {
		switch {
		case key == "":
			o.err = errors.New("UniqueFor: the key is empty")
		case !storableText(key):
			o.err = fmt.Errorf("UniqueFor(%q): the key must be valid UTF-8, without NUL", key)
		case period < time.Microsecond:
			o.err = fmt.Errorf("UniqueFor(%q): the period must be at least 1µs, got %v", key, period)
		}
		o.periodKey, o.period = key, period
	}
}
