package actor

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/actorpool/actorpool/internal/errs"
)

// ErrClosed is returned by every send once Close or Stop has begun, and by Ask
// when the actor shut down before its task finished.
var ErrClosed = errors.New("actor: closed")

// ErrMailboxFull is returned when a bounded mailbox has no room and the sender
// may not wait: by TrySend under OverflowBlock, and by every send under
// OverflowReject.
var ErrMailboxFull = errors.New("actor: mailbox full")

// ErrDropped is returned by Ask when the overflow policy dropped its task.
var ErrDropped = errors.New("actor: task dropped by the overflow policy")

// ErrPermanent matches, with errors.Is, every error wrapped by [Permanent].
var ErrPermanent = errors.New("actor: permanent error")

// ErrAbandoned is the error of a dead letter whose handler was still running
// when Close or Stop stopped waiting for it. The handler may yet finish the
// work, so replaying such a letter may do it twice.
var ErrAbandoned = errors.New("actor: handler still running after the grace period")

// Permanent marks err as one that retrying cannot fix, so the task goes to the
// dead letters at once with ReasonPermanent. The result matches both err and
// [ErrPermanent] with errors.Is. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// A TaskError is one failed attempt of one task: what the error handler
// receives, and what Ask returns when its task failed for good.
type TaskError struct {
	Actor   string // the actor's name
	Worker  string // the worker that ran the attempt, "<actor>/<n>"
	ID      uint64 // the task's ID
	Type    string // the task's type name
	Attempt int    // the attempt that failed, from 1
	// Final reports that no other attempt follows: the task goes to the dead
	// letters.
	Final bool
	// Err is what the handler returned, a [*PanicError] if it panicked or
	// called runtime.Goexit (or if the error it returned panicked when
	// asked what it wraps), or the context's error if it timed out.
	Err error
}

// Error names the actor, the task, the attempt and the worker, then the
// error.
func (e *TaskError) Error() string {
	return "actor " + strconv.Quote(e.Actor) + ": task " + strconv.FormatUint(e.ID, 10) +
		" (" + e.Type + ") attempt " + strconv.Itoa(e.Attempt) + " on " + e.Worker + ": " + e.Err.Error()
}

// Unwrap returns the attempt's error.
func (e *TaskError) Unwrap() error { return e.Err }

// Attrs returns the error as log attributes: actor, worker, task_id,
// task_type, attempt and error, and the stack when the handler panicked.
// Both actors log failed attempts with them, so one query finds a task's
// failures whichever actor ran it.
func (e *TaskError) Attrs() []slog.Attr {
	attrs := []slog.Attr{
		slog.String("actor", e.Actor),
		slog.String("worker", e.Worker),
		slog.Uint64("task_id", e.ID),
		slog.String("task_type", e.Type),
		slog.Int("attempt", e.Attempt),
		slog.Any("error", e.Err),
	}
	if pe := (*PanicError)(nil); errors.As(e.Err, &pe) {
		attrs = append(attrs, slog.String("stack", string(pe.Stack)))
	}
	return attrs
}

// A PanicError is the error of an attempt whose handler panicked or called
// runtime.Goexit; its Func is "handler". A panicking sink or error handler
// yields one too, with Func "Sink.Put" or "Config.OnError", which is
// logged. It is the same type as actorpool.PanicError.
type PanicError = errs.PanicError

// A DrainError is returned by Close and Stop when tasks were dead-lettered
// because the actor stopped before finishing them.
type DrainError struct {
	Actor  string
	Reason Reason // ReasonDrainDeadline after Close, ReasonClosed after Stop
	// Queued counts tasks that were waiting — in the mailbox or for a retry —
	// when the actor stopped draining.
	Queued int
	// InFlight counts tasks that were in a handler then and were
	// dead-lettered for the shutdown: their handler failed once its context
	// was cancelled, or was abandoned.
	InFlight int
	// Abandoned counts, among InFlight, handlers still running when Close
	// returned; their tasks carry ErrAbandoned.
	Abandoned int
	// Err is why draining stopped: the cause of Close's context, or ErrClosed
	// after Stop.
	Err error
}

// Error says what the shutdown cost and why.
func (e *DrainError) Error() string {
	s := fmt.Sprintf("actor %q stopped before draining (%s): dead-lettered %d queued and %d in-flight tasks",
		e.Actor, e.Reason, e.Queued, e.InFlight)
	if e.Abandoned > 0 {
		s += fmt.Sprintf(", %d of them with handlers still running", e.Abandoned)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns why draining stopped.
func (e *DrainError) Unwrap() error { return e.Err }

// A ConfigError names a Config field whose value breaks a rule, the value,
// and what is allowed: Field, such as "Workers" or "Backoff.Initial";
// Value, what it has; Rule, such as "must not be negative (zero means
// one)". Its message reads "actor: Config.Workers is -1: must not be
// negative (zero means one)". It is the same type as
// actorpool.ConfigError.
type ConfigError = errs.ConfigError
