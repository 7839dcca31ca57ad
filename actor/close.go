package actor

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Close stops the actor from accepting tasks and waits while its workers
// drain the mailbox and the retries. If ctx ends first, Close cancels the
// contexts of the running tasks, waits Config.Grace for their handlers to
// return, dead-letters every task left with ReasonDrainDeadline, and returns
// a [*DrainError] saying how many were queued and in flight; so Close returns
// no later than ctx's deadline plus the grace. Sends waiting for room return
// ErrClosed at once.
//
// Close may be called many times and from many goroutines: every call
// returns the same result once the actor has stopped, and a call whose ctx
// ends sooner hastens the others. Once it returns, no goroutine of the actor
// is left but the workers of handlers still running after the grace, whose
// tasks carry ErrAbandoned. A handler must not call Close on its own actor,
// which would wait for the handler to return.
func (a *Actor[T]) Close(ctx context.Context) error {
	return a.finishClose(ctx, a.beginClose())
}

// Stop is Close without the drain: it cancels the running tasks at once,
// waits Config.Grace for their handlers, and dead-letters every task left
// with ReasonClosed. It returns a [*DrainError] if that left any task
// undone. Like Close it may be called many times from many goroutines, and
// it hastens a Close in progress.
func (a *Actor[T]) Stop() error {
	first := a.beginClose()
	a.halt(ReasonClosed, ErrClosed)
	return a.finishClose(context.Background(), first)
}

// finishClose is the rest of a Close or Stop that has begun closing, first
// when it was the one to begin: the first does the shutdown's work, and
// every call waits for it, hastening it when ctx ends.
func (a *Actor[T]) finishClose(ctx context.Context, first bool) error {
	if first {
		a.shutdown(ctx)
	}
	select {
	case <-a.closed:
	case <-ctx.Done():
		a.halt(ReasonDrainDeadline, context.Cause(ctx))
		<-a.closed
	}
	return a.closeErr
}

// beginClose stops accepting tasks: senders waiting for room get ErrClosed,
// and idle workers are woken to leave if nothing remains to do. It reports
// whether this call began the close, which only the first does.
func (a *Actor[T]) beginClose() bool {
	a.mu.Lock()
	if a.closingLocked() {
		a.mu.Unlock()
		return false
	}
	a.enterLocked(phaseDraining)
	var refused []*sender[T]
	for s := a.senders.popFront(); s != nil; s = a.senders.popFront() {
		s.err = a.errClosed
		a.c.rejected++
		refused = append(refused, s)
	}
	if a.set.deadLetterRejected {
		// Their letters are put by the senders, and waited for as the
		// others are, so that a sink can be closed once Close returns.
		for _, s := range refused {
			s.letter = true
		}
		a.letters.Add(len(refused))
	}
	idle := a.idle
	a.idle = nil
	a.checkDrainedLocked()
	a.mu.Unlock()
	for _, s := range refused {
		s.done <- struct{}{}
	}
	for _, w := range idle {
		w.wake <- false
	}
	return true
}

// halt stops draining an actor that has begun closing: it cancels the
// tasks' contexts and dead-letters the tasks that wait, in the mailbox or
// for a retry. Only a call while the actor drains acts: once it is halted,
// drained or closed, nothing is left to halt.
func (a *Actor[T]) halt(reason Reason, cause error) {
	a.mu.Lock()
	if a.phase != phaseDraining {
		a.mu.Unlock()
		return
	}
	a.enterLocked(phaseHalted)
	a.haltReason, a.haltCause = reason, cause
	type left struct {
		env      envelope[T]
		attempts int
	}
	var queued []left
	hands := a.takeHandsLocked()
	slices.SortFunc(hands, func(x, y envelope[T]) int { return cmp.Compare(x.id, y.id) })
	for _, env := range hands {
		queued = append(queued, left{env, env.attempt() - 1})
	}
	for a.ready.n > 0 {
		var env envelope[T]
		a.ready.pop(&env)
		queued = append(queued, left{env, env.attempt() - 1})
	}
	for a.box.len() > 0 {
		var env envelope[T]
		a.box.pop(&env)
		queued = append(queued, left{env, env.attempt() - 1})
	}
	for _, env := range a.takeRetriesLocked() {
		queued = append(queued, left{env, env.attempt()})
	}
	a.lost.Queued = len(queued)
	a.countLettersLocked(len(queued))
	idle := a.idle
	a.idle = nil
	a.checkDrainedLocked()
	a.mu.Unlock()

	a.cancel(cause)
	close(a.halted)
	for _, w := range idle {
		w.wake <- false
	}
	for i := range queued {
		l := &queued[i]
		a.deadLetter(&l.env, reason, l.env.lastErr(), l.attempts, nil)
	}
}

// shutdown is the work of the first Close: wait for the drain or its end,
// then for the grace, then for the letters being put.
func (a *Actor[T]) shutdown(ctx context.Context) {
	select {
	case <-a.drained:
	case <-a.halted:
	case <-ctx.Done():
		a.halt(ReasonDrainDeadline, context.Cause(ctx))
	}
	select {
	case <-a.halted:
		grace := time.NewTimer(a.set.grace)
		select {
		case <-a.drained:
		case <-grace.C:
			a.abandon()
		}
		grace.Stop()
	default:
	}
	a.letters.Wait()

	a.mu.Lock()
	// Only a halt loses tasks.
	if a.lost.Queued > 0 || a.lost.InFlight > 0 {
		e := a.lost
		e.Actor, e.Reason, e.Err = a.name, a.haltReason, a.haltCause
		a.closeErr = &e
	}
	a.enterLocked(phaseClosed)
	a.mu.Unlock()
	a.cancel(ErrClosed) // nothing runs that needs it; release its resources
	a.clock.stop()
	close(a.closed)
}

// abandon dead-letters the tasks whose handlers outlived the grace. Their
// workers leave when the handlers return; their outcome is only logged.
func (a *Actor[T]) abandon() {
	a.mu.Lock()
	var envs []envelope[T]
	for w := range a.workers {
		if w.state == workerRunning {
			a.moveLocked(w, workerAbandoned)
			envs = append(envs, *w.runningLocked())
		}
	}
	a.lost.InFlight += len(envs)
	a.lost.Abandoned = len(envs)
	a.countLettersLocked(len(envs))
	reason := a.haltReason
	a.mu.Unlock()
	slices.SortFunc(envs, func(x, y envelope[T]) int { return cmp.Compare(x.id, y.id) })
	for i := range envs {
		env := &envs[i]
		a.deadLetter(env, reason, ErrAbandoned, env.attempt(), nil)
	}
}
