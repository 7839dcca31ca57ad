package pgactor

import (
	"context"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/errs"
)

// spawnLocked starts a worker that runs first, if not nil, then waits for
// tasks. The caller accounts for it in idle or busy.
func (a *Actor[T]) spawnLocked(first *lease) {
	a.nextWorker++
	a.workers++
	name := a.name + "/" + strconv.Itoa(a.nextWorker)
	a.workerWG.Add(1)
	go a.work(name, first)
}

// work is a worker's goroutine.
func (a *Actor[T]) work(name string, l *lease) {
	defer a.workerWG.Done()
	goexit := true
	defer func() {
		if goexit {
			a.afterGoexit(name, l)
		}
	}()
	pprof.Do(context.Background(), pprof.Labels("actor", a.name, "worker", name), func(context.Context) {
		for {
			if l == nil {
				if l = a.next(); l == nil {
					break
				}
			}
			if l = a.execute(name, l); l != nil {
				continue
			}
			a.mu.Lock()
			a.busy--
			a.idle++
			a.mu.Unlock()
			nudge(a.free)
		}
	})
	goexit = false
}

// next waits for the pump's next task; nil means the worker must leave.
// An elastic actor's worker above the minimum leaves after KeepAlive idle.
func (a *Actor[T]) next() *lease {
	elastic := a.set.max > a.set.min
	if !elastic {
		l, ok := <-a.tasks
		if !ok {
			a.leave()
		}
		return l
	}
	t := time.NewTimer(a.set.keepAlive)
	defer t.Stop()
	for {
		select {
		case l, ok := <-a.tasks:
			if !ok {
				a.leave()
			}
			return l
		case <-t.C:
			a.mu.Lock()
			// The pump takes the workers it hands tasks to out of idle
			// first, so a worker that takes itself out of what is left
			// leaves none of those tasks unserved.
			if a.idle > 0 && a.workers > a.set.min {
				a.idle--
				a.workers--
				a.mu.Unlock()
				return nil
			}
			a.mu.Unlock()
			t.Reset(a.set.keepAlive)
		}
	}
}

// leave accounts for an idle worker leaving at Close.
func (a *Actor[T]) leave() {
	a.mu.Lock()
	a.idle--
	a.workers--
	a.mu.Unlock()
}

// afterGoexit settles the task of a worker whose handler called
// runtime.Goexit, and starts a worker in its place. A Goexit of OnError,
// or of the Tracer's end, comes after the task was settled (report runs
// the settle deferred), and finds its lease forgotten.
func (a *Actor[T]) afterGoexit(name string, l *lease) {
	// Deferred, so that a worker takes this one's place even when OnError,
	// told of the handler's Goexit, calls Goexit again.
	defer func() {
		a.mu.Lock()
		a.workers--
		a.busy--
		a.spawnLocked(nil)
		a.idle++
		a.mu.Unlock()
		nudge(a.free)
	}()
	if l == nil {
		return
	}
	defer a.endAttempt(name, l)
	a.mu.Lock()
	settled := l.forgotten
	a.mu.Unlock()
	if !settled {
		err := &actor.PanicError{Func: "handler", Goexit: true, Stack: debug.Stack()}
		l.trace.failed(err)
		a.fail(name, l, err)
	}
}

// execute runs l's handler once and settles what became of its task. It
// returns the worker's next task when the round that committed the
// completion fetched one for it. A task canceled before it was fetched,
// lost too often or whose payload no longer decodes goes to the dead
// letters without running.
func (a *Actor[T]) execute(worker string, l *lease) *lease {
	defer l.cancel(nil)
	ctx, traceErr := a.startAttempt(worker, l)
	next := a.run(ctx, worker, l, traceErr)
	a.endAttempt(worker, l)
	return next
}

// run is execute's attempt, with ctx the handler's context before its
// timeout; traceErr, when not nil, the panic of the Tracer as the attempt
// started, which the attempt fails with instead of running the handler.
func (a *Actor[T]) run(ctx context.Context, worker string, l *lease, traceErr error) *lease {
	switch {
	case l.canceled:
		a.deadLetter(worker, l, ReasonCanceled, nil, false)
		return nil
	case l.lost > a.set.maxLost:
		a.deadLetter(worker, l, ReasonLost, nil, false)
		return nil
	}
	payload, err := a.decode(l.payload)
	if err != nil {
		a.deadLetter(worker, l, ReasonUndecodable, &DecodeError{Actor: a.name, ID: uint64(l.id), Type: l.typ, Err: err}, false)
		return nil
	}
	if a.set.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.set.timeout)
		defer cancel()
	}
	if traceErr != nil {
		// A handler's panic fails its attempt, and so does a tracer's
		// around it: the task is retried, or dead-lettered with the panic,
		// rather than run with a context the tracer did not make.
		err = traceErr
	} else {
		err = a.call(ctx, l, payload)
	}
	l.trace.failed(err)
	fault(pointHandled)
	return a.settle(worker, l, err)
}

// decode decodes a payload, turning a panic of the codec (a payload type
// whose UnmarshalJSON panics on a value) into an *actor.PanicError: such a
// task is undecodable, and dead-lettered, not a crash of every process
// that fetches it in turn.
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
// returned. A handler that calls runtime.Goexit ends the worker; work's
// deferred afterGoexit settles its task.
func (a *Actor[T]) call(ctx context.Context, l *lease, payload T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &actor.PanicError{Func: "handler", Value: v, Stack: debug.Stack()}
		}
	}()
	return errs.CheckHandlerError[*SnoozeError](a.handler(ctx, taskOf(l, payload)), actor.ErrPermanent)
}
