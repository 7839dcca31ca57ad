package pgactor

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Snooze returns the error a handler returns to have its task wait d and
// run again, as though it had not run: the attempt is not counted — the
// next run sees the same Task.Attempt — and the task is neither failed,
// retried nor dead-lettered, whatever Config.MaxAttempts says. It waits as
// a row due in d, holding no worker, no lease and no connection. What the
// handler wrote through Tx is rolled back.
//
// A negative d is a bug in the handler: the attempt then counts as failed,
// with an error that says so.
//
// The error may be wrapped; a task whose Cancel or lease loss came first
// is settled as those say.
func Snooze(d time.Duration) error { return &SnoozeError{Delay: d} }

// A SnoozeError is the error Snooze returns; errors.As finds it in a
// handler's error.
type SnoozeError struct {
	Delay time.Duration // how long the task waits before it runs again
}

// Error says how long the task was snoozed for.
func (e *SnoozeError) Error() string {
	return fmt.Sprintf("pgactor: task snoozed for %v", e.Delay)
}

// snoozed returns the SnoozeError in a handler's error, or nil.
func snoozed(err error) *SnoozeError {
	var se *SnoozeError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// snooze settles a run whose handler returned Snooze(d): its task waits
// d, its attempt not charged. A negative d fails the attempt.
func (a *Actor[T]) snooze(worker string, l *lease, d time.Duration) {
	if d < 0 {
		a.fail(worker, l, fmt.Errorf("pgactor: the handler returned Snooze(%v): the delay must be 0 or more; the attempt counts as failed", d))
		return
	}
	a.discard(l)
	if a.record(worker, l, "snooze", func(ctx context.Context) (int, error) { return a.store.snooze(ctx, l, d) }) {
		l.trace.settled(OutcomeSnoozed)
		a.retryAt(time.Now().Add(d))
	}
}
