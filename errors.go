package actorpool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/actorpool/actorpool/internal/errs"
)

var (
	// ErrClosed is returned by takes on a pool that is closed or closing.
	ErrClosed = errors.New("actorpool: pool closed")

	// ErrPoolExhausted is returned by a take that finds every object busy
	// and Config.MaxQueueSize takers already waiting. While creates are
	// failing, the error returned wraps it and the latest *CreateError.
	ErrPoolExhausted = errors.New("actorpool: pool exhausted: the wait queue is full")

	// ErrWouldBlock is returned by TryAcquire when no idle object is ready.
	// While creates are failing, the error returned wraps it and the
	// latest *CreateError.
	ErrWouldBlock = errors.New("actorpool: no idle object ready")

	// ErrReleased is returned when a lease is given back twice, or used
	// after it was given back or destroyed.
	ErrReleased = errors.New("actorpool: lease already given back")

	// ErrHeldByWith is returned by Lease.Hijack on a lease lent by a With
	// on the caller's context: the object belongs to that With.
	ErrHeldByWith = errors.New("actorpool: the object is held by a With on this context and cannot be hijacked")

	// ErrTimeout matches, with errors.Is, a WaitError whose context's
	// deadline passed.
	ErrTimeout = errors.New("actorpool: acquire timed out")

	// ErrCreateFailed matches, with errors.Is, every CreateError.
	ErrCreateFailed = errors.New("actorpool: create failed")

	errNoCreateFunc = errors.New("FactoryFuncs.CreateFunc is nil")
)

// A CreateError reports a Factory.Create that failed, panicked or outlived
// Config.CreateTimeout. It is given to the take that was waiting for the
// object, and it matches ErrCreateFailed and its cause with errors.Is.
type CreateError struct {
	// Err is what Create returned, a *PanicError, or
	// context.DeadlineExceeded when it outlived Timeout.
	Err error
	// Timeout is Config.CreateTimeout when the create outlived it, else
	// zero.
	Timeout time.Duration
}

func (e *CreateError) Error() string {
	if e.Timeout > 0 {
		return fmt.Sprintf("actorpool: create timed out after %v: %v", e.Timeout, e.Err)
	}
	return "actorpool: create failed: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *CreateError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCreateFailed.
func (e *CreateError) Is(target error) bool { return target == ErrCreateFailed }

// A WaitError reports a take whose context ended while it waited for an
// object. Its message says how long it waited and how busy the pool was, as
// "waited 2s, 0/8 available (8 in use, 3 waiting)". It matches its context's
// error with errors.Is, and ErrTimeout when that error is a deadline.
//
// While creates are failing — the latest create failed and none has
// succeeded since, as when the server is down — it also carries that
// create's error in LastCreateErr, matches it and its cause with errors.Is,
// and ends its message with "; last create error: " and the error, as
// HikariCP's timeout reports the last connection failure. The same holds for
// every take that ends without an object while creates fail: a full queue's
// ErrPoolExhausted and TryAcquire's ErrWouldBlock wrap the *CreateError too.
// Once a create succeeds, takes stop reporting it.
type WaitError struct {
	Waited        time.Duration // how long the take waited
	Idle          int           // objects idle when it gave up
	InUse         int           // objects in use when it gave up
	Max           int           // Config.MaxObjects
	Waiting       int           // takers waiting, this one included
	Err           error         // the context's error
	LastCreateErr error         // a *CreateError: the latest create's, if it failed and none has succeeded since
}

func (e *WaitError) Error() string {
	var b strings.Builder
	if errors.Is(e.Err, context.DeadlineExceeded) {
		b.WriteString("actorpool: acquire timed out: ")
	} else {
		b.WriteString("actorpool: acquire canceled: ")
	}
	fmt.Fprintf(&b, "waited %v, %d/%d available (%d in use, %d waiting): %v",
		e.Waited.Round(time.Microsecond), e.Idle, e.Max, e.InUse, e.Waiting, e.Err)
	if e.LastCreateErr != nil {
		fmt.Fprintf(&b, "; last create error: %v", e.LastCreateErr)
	}
	return b.String()
}

// Unwrap returns the context's error and the last create error.
func (e *WaitError) Unwrap() []error {
	if e.LastCreateErr != nil {
		return []error{e.Err, e.LastCreateErr}
	}
	return []error{e.Err}
}

// Is reports whether target is ErrTimeout and the wait ended by a deadline.
func (e *WaitError) Is(target error) bool {
	return target == ErrTimeout && errors.Is(e.Err, context.DeadlineExceeded)
}

// A PanicError is a panic recovered from a Factory method, with the stack
// of the goroutine that panicked. Its Func is "Factory.Create",
// "Factory.Validate" or "Factory.Test"; a panic in Factory.Destroy is
// logged. It is the same type as actor.PanicError, which a panicking
// handler yields.
type PanicError = errs.PanicError
