package jsactor

import (
	"errors"
	"fmt"
	"time"
)

// Snooze returns the error a handler returns to have its task wait d and
// run again, as though it had not run: the attempt is not charged — the
// next run sees the same Task.Attempt — and the task is neither failed,
// retried nor dead-lettered. It waits on the delayed subject, holding no
// worker and no lease. A negative d is a bug in the handler: the attempt
// then counts as failed, with an error that says so.
func Snooze(d time.Duration) error { return &SnoozeError{Delay: d} }

// A SnoozeError is the error Snooze returns; errors.As finds it in a
// handler's error.
type SnoozeError struct {
	Delay time.Duration // how long the task waits before it runs again
}

// Error says how long the task was snoozed for.
func (e *SnoozeError) Error() string { return fmt.Sprintf("jsactor: task snoozed for %v", e.Delay) }

// snoozed returns the SnoozeError in a handler's error, or nil.
func snoozed(err error) *SnoozeError {
	var se *SnoozeError
	if errors.As(err, &se) {
		return se
	}
	return nil
}
