package actor

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
)

// run runs w's task once and reports whether it succeeded; a failure has
// been settled — retried or dead-lettered — when it returns.
func (a *Actor[T]) run(ctx context.Context, w *worker[T]) bool {
	if a.set.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.set.timeout)
		defer cancel()
	}
	err := a.call(ctx, w)
	if err == nil {
		return true
	}
	a.fail(w, err)
	return false
}

// call runs the handler, turning a panic into a *PanicError. A handler that
// calls runtime.Goexit cannot be stopped from ending the goroutine; call
// records it in w.goexit for afterGoexit to settle.
func (a *Actor[T]) call(ctx context.Context, w *worker[T]) (err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			err = &PanicError{Func: "handler", Value: v, Stack: debug.Stack()}
			return
		}
		w.goexit = &PanicError{Func: "handler", Goexit: true, Stack: debug.Stack()}
	}()
	err = a.handler(ctx, w.task(a))
	returned = true
	return err
}

// fail settles a failed attempt of w's task: it schedules a retry, or
// dead-letters the task, and reports the failure to the error handler.
func (a *Actor[T]) fail(w *worker[T], err error) {
	env := w.env
	attempt := env.attempt()
	var permanent, panicked bool
	classify := func() error {
		permanent = errors.Is(err, ErrPermanent)
		panicked = errors.As(err, new(*PanicError))
		return nil
	}
	// The error's methods are the handler's code too, and errors.Is runs
	// them: a nil *E returned as an error, whose Unwrap reads a field,
	// panics there. That fails the attempt as a panic in the handler does,
	// rather than the worker, and the error that panicked goes no further.
	if perr := protect("the handler's error", classify); perr != nil {
		err = perr
		classify()
	}

	a.mu.Lock()
	if w.state == workerAbandoned {
		a.mu.Unlock()
		a.lateOutcome(w, err)
		return
	}
	a.moveLocked(w, workerFailed)
	a.c.failed++
	if panicked {
		a.c.panicked++
	}
	// A failure after the actor stopped draining is most likely the
	// cancellation of the task's context, so it is laid to the shutdown
	// rather than to the attempts; only the handler's own verdict that
	// retrying cannot help ranks above it.
	var reason Reason
	switch {
	case permanent:
		reason = ReasonPermanent
	case a.haltedLocked():
		reason = a.haltReason
		a.lost.InFlight++
	case attempt >= a.set.maxAttempts:
		reason = ReasonMaxAttempts
	}
	var r *retry[T]
	if reason == 0 {
		a.c.retried++
		r = a.retryLocked(*env, err)
	} else {
		a.countLettersLocked(1)
	}
	a.mu.Unlock()

	te := &TaskError{Actor: a.name, Worker: w.name, ID: env.id, Type: a.typeOf(env), Attempt: attempt, Final: reason != 0, Err: err}
	// Deferred, so that the task is settled even when OnError ends the
	// goroutine with runtime.Goexit (afterGoexit replaces the worker), and
	// after OnError, so that this attempt is reported before the next runs.
	if r != nil {
		defer a.startRetry(r, a.set.backoff.delay(attempt, rand.Float64()))
	} else {
		defer a.deadLetter(env, reason, err, attempt, te)
	}
	if perr := protect("Config.OnError", func() error { a.onError(te); return nil }); perr != nil {
		// The failure it was given goes with it: a retried attempt is
		// recorded nowhere else.
		a.log.LogAttrs(context.Background(), slog.LevelError, "actor: error handler panicked",
			append(te.Attrs(), slog.Any("error_handler", perr))...)
	}
}

// lateOutcome logs the outcome of a handler that returned after Close had
// dead-lettered its task with ErrAbandoned: whoever replays the letter needs
// to know whether the work was done after all.
func (a *Actor[T]) lateOutcome(w *worker[T], err error) {
	outcome := "completed"
	if err != nil {
		outcome = "failed"
	}
	a.log.LogAttrs(context.Background(), slog.LevelWarn, "actor: abandoned handler returned; its task is already dead-lettered",
		slog.String("actor", a.name), slog.String("worker", w.name), slog.Uint64("task_id", w.env.id),
		slog.String("task_type", a.typeOf(w.env)), slog.String("outcome", outcome), slog.Any("error", err))
}

// logFailure is the default error handler.
func (a *Actor[T]) logFailure(err *TaskError) {
	level, msg := slog.LevelWarn, "actor: task failed; will retry"
	if err.Final {
		level, msg = slog.LevelError, "actor: task failed"
	}
	a.log.LogAttrs(context.Background(), level, msg, err.Attrs()...)
}

// protect calls fn, turning a panic into a *PanicError naming what as the
// function that panicked, so that a failing callback — a sink, an error
// handler — cannot take down a worker or a sender.
func protect(what string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Func: what, Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}
