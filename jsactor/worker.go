package jsactor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/internal/errs"
)

// startWorker starts one worker goroutine.
func (a *Actor[T]) startWorker() {
	a.mu.Lock()
	a.nextWorker++
	name := a.name + "/" + strconv.Itoa(a.nextWorker)
	a.mu.Unlock()
	a.workerWG.Add(1)
	go a.work(name)
}

// work runs the tasks the fetcher hands it until the queue closes.
func (a *Actor[T]) work(name string) {
	defer a.workerWG.Done()
	for h := range a.queue {
		if !a.runGuarded(name, h) {
			return // the handler called runtime.Goexit; a new worker took this one's place
		}
		a.tokens <- struct{}{}
	}
}

// runGuarded runs h, and reports false when its handler called
// runtime.Goexit: the task is then settled as failed, and a new worker
// started in place of this goroutine, which is ending.
func (a *Actor[T]) runGuarded(name string, h *held) (ok bool) {
	defer a.endTrace(name, h) // after a Goexit's settle
	defer func() {
		if ok {
			return
		}
		// Deferred, so that a worker takes this one's place even when
		// OnError, reporting the handler's Goexit, calls Goexit again.
		defer func() {
			a.tokens <- struct{}{}
			a.startWorker()
		}()
		// A Goexit of OnError comes after the task was settled (report),
		// and the settle here finds it so.
		a.settle(name, h, &actor.PanicError{Func: "handler", Goexit: true, Stack: debug.Stack()})
	}()
	a.runTask(name, h)
	return true
}

// runTask runs one delivery of a task, unless it is lost too often, out of
// attempts or undecodable, and settles it.
func (a *Actor[T]) runTask(name string, h *held) {
	switch a.superseded(h) {
	case earlierSettled:
		// An earlier delivery stored the task's next copy or its dead
		// letter, and its acknowledgement of this message was lost: this
		// delivery is not a run, lost or otherwise.
		if h.claim(heldSettled) {
			a.release(h)
		}
		return
	case earlierUnknown:
		// Left to be delivered again: the next delivery charges this one
		// and the one before it as lost (lost below), and counts this
		// one; the one before is counted here, as it would have been had
		// this delivery run (TestUnansweredProbeCountsLost).
		a.countLost(h)
		if h.claim(heldSettled) {
			a.release(h)
		}
		return
	}
	traced, traceErr := a.startAttempt(name, h)
	a.countLost(h)
	// A lost run counts as an attempt, as in pgactor, but only MaxLost
	// ends a task for it: a task whose last attempt was lost runs again,
	// its Attempt past MaxAttempts, and is dead-lettered if that run fails.
	lost := h.rec.lost + h.delivered - 1
	if lost > a.set.maxLost && !h.claim(heldSettled) {
		return // Close gave it back
	}
	if lost > a.set.maxLost {
		err := a.lostError(h, lost)
		a.report(&actor.TaskError{Actor: a.name, Worker: name, ID: h.rec.id, Type: a.typeOf(h), Attempt: h.attempt - 1, Final: true, Err: err},
			func() { a.deadLetter(h, ReasonLost, err, false) })
		return
	}
	payload, err := a.decode(h.msg.Data())
	if err != nil {
		if !h.claim(heldSettled) {
			return
		}
		derr := &DecodeError{Actor: a.name, ID: h.rec.id, Err: err}
		a.report(&actor.TaskError{Actor: a.name, Worker: name, ID: h.rec.id, Type: a.typeOf(h), Attempt: h.attempt, Final: true, Err: derr},
			func() { a.deadLetter(h, ReasonUndecodable, derr, false) })
		return
	}
	if a.runCtx.Err() != nil {
		// Close gave up on the handlers before this one started: it gives
		// the task back, or has, and another process may run it already.
		if h.claim(heldGivenBack) {
			a.giveBack(h)
		}
		return
	}
	if h.delivered > 1 && !a.leaseHeld(h) {
		// superseded's round trips outlasted the lease: the task is
		// another's by now (TestSlowProbeBeforeRun).
		if h.claim(heldSettled) {
			a.log.Warn("lease lost while asking whether an earlier delivery settled the task: it is not run here, and runs again",
				"task_id", h.rec.id, "attempt", h.attempt)
			a.release(h)
		}
		return
	}
	ctx, cancel := context.WithCancelCause(traced)
	defer cancel(nil)
	a.watch(h, cancel)
	var stop context.CancelFunc = func() {}
	if a.set.timeout > 0 {
		ctx, stop = context.WithTimeout(ctx, a.set.timeout)
	}
	defer stop()
	started := time.Now()
	h.rec.started = started
	task := actor.Task[T]{ID: h.rec.id, Type: a.typeOf(h), Attempt: h.attempt, Enqueued: h.rec.enqueued, Payload: payload}
	if traceErr != nil {
		// A handler's panic fails its attempt, and so does a tracer's
		// around it: the task is retried, or dead-lettered with the panic,
		// rather than run with a context the tracer did not make.
		err = traceErr
	} else {
		err = a.busyCall(ctx, task)
	}
	if err != nil && ctx.Err() != nil && a.set.timeout > 0 && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		err = fmt.Errorf("%w (Timeout %v)", err, a.set.timeout)
	}
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrClosed) {
		// Close canceled the handler: the attempt was cut short, not failed.
		if h.claim(heldSettled) {
			a.giveBack(h)
			h.trace.failed(err)
			h.trace.settled(tasktrace.OutcomeGivenBack)
		}
		return
	}
	a.settle(name, h, err)
}

// busyCall runs the handler, counting its worker busy until it returns or
// calls runtime.Goexit: only the handler's run is counted, whatever a
// Goexit of OnError later cuts short.
func (a *Actor[T]) busyCall(ctx context.Context, task actor.Task[T]) error {
	a.beginRun()
	defer a.endRun()
	return a.call(ctx, task)
}

// countLost counts the delivery before h's as lost, when h's is not the
// first: it ended without a word. Once, whichever of the worker and Close
// — which gives back a task fetched as it closes, or waiting for a worker
// — comes to it first.
func (a *Actor[T]) countLost(h *held) {
	if h.delivered > 1 && h.lostCounted.CompareAndSwap(false, true) {
		a.counts.add(countLost, 1)
	}
}

// decode decodes a payload, turning a panic of the codec into an
// *actor.PanicError: a payload that makes it panic is undecodable, not a
// crash of each process that takes its task up in turn.
func (a *Actor[T]) decode(data []byte) (p T, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &actor.PanicError{Func: "Codec.Decode", Value: v, Stack: debug.Stack()}
		}
	}()
	return a.codec.Decode(data)
}

// call runs the handler, turning a panic into an *actor.PanicError, as
// errs.CheckHandlerError does one of the methods of the error it
// returned.
func (a *Actor[T]) call(ctx context.Context, task actor.Task[T]) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &actor.PanicError{Func: "handler", Value: v, Stack: debug.Stack()}
		}
	}()
	return errs.CheckHandlerError[*SnoozeError](a.handler(ctx, task), actor.ErrPermanent)
}

func (a *Actor[T]) beginRun() {
	a.mu.Lock()
	a.busy++
	a.mu.Unlock()
}

func (a *Actor[T]) endRun() {
	a.mu.Lock()
	a.busy--
	a.mu.Unlock()
}

// typeOf returns the type of h's task.
func (a *Actor[T]) typeOf(h *held) string {
	if h.rec.typ != "" {
		return h.rec.typ
	}
	return a.typ
}

// lostError is the error a task dead-lettered as lost carries: its last
// attempt's, if one failed, and how often it was lost.
func (a *Actor[T]) lostError(h *held, lost int) error {
	msg := fmt.Sprintf("jsactor: the task's worker was lost %d times (MaxLost %d)", lost, a.set.maxLost)
	if h.rec.lastErr != "" {
		msg += "; last error: " + h.rec.lastErr
	}
	return storedError(msg)
}
