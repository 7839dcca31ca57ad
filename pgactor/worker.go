package pgactor

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/actorpool/actorpool/actor"
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
func (a *Actor[T]) work(name string, r *lease) {
	defer a.workerWG.Done()
	goexit := true
	defer func() {
		if goexit {
			a.afterGoexit(name, r)
		}
	}()
	pprof.Do(context.Background(), pprof.Labels("actor", a.name, "worker", name), func(context.Context) {
		for {
			if r == nil {
				if r = a.next(); r == nil {
					break
				}
			}
			if r = a.execute(name, r); r != nil {
				continue
			}
			a.mu.Lock()
			a.busy--
			a.idle++
			a.mu.Unlock()
			select {
			case a.free <- struct{}{}:
			default:
			}
		}
	})
	goexit = false
}

// next waits for the fetcher's next task; nil means the worker must leave.
// An elastic actor's worker above the minimum leaves after KeepAlive idle.
func (a *Actor[T]) next() *lease {
	elastic := a.set.max > a.set.min
	if !elastic {
		r, ok := <-a.tasks
		if !ok {
			a.leave()
		}
		return r
	}
	t := time.NewTimer(a.set.keepAlive)
	defer t.Stop()
	for {
		select {
		case r, ok := <-a.tasks:
			if !ok {
				a.leave()
			}
			return r
		case <-t.C:
			a.mu.Lock()
			// The fetcher takes the workers it hands tasks to out of idle
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
// runtime.Goexit, and starts a worker in its place.
func (a *Actor[T]) afterGoexit(name string, r *lease) {
	if r != nil {
		a.fail(name, r, &actor.PanicError{Func: "handler", Goexit: true, Stack: debug.Stack()})
	}
	a.mu.Lock()
	a.workers--
	a.busy--
	a.spawnLocked(nil)
	a.idle++
	a.mu.Unlock()
	select {
	case a.free <- struct{}{}:
	default:
	}
}

// execute runs r's handler once and settles the outcome in the database.
// It returns the worker's next task when the round that committed the
// completion took one for it.
func (a *Actor[T]) execute(worker string, r *lease) *lease {
	defer r.cancel(nil)
	switch {
	case r.canceled:
		a.deadLetter(worker, r, ReasonCanceled, nil, 1)
		return nil
	case r.lost > a.set.maxLost:
		a.deadLetter(worker, r, ReasonLost, nil, 1)
		return nil
	}
	payload, err := a.codec.Decode(r.payload)
	if err != nil {
		a.deadLetter(worker, r, ReasonUndecodable, &DecodeError{Actor: a.name, ID: uint64(r.id), Type: r.typ, Err: err}, 1)
		return nil
	}
	ctx := r.ctx
	if a.set.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.set.timeout)
		defer cancel()
	}
	err = a.call(ctx, r, payload)
	fault(pointHandled)
	cause := context.Cause(r.ctx)
	switch {
	case err == nil:
		return a.complete(worker, r)
	case cause == ErrLeaseLost:
		// Another worker may hold the task now: nothing this one does
		// with it would be accepted.
		a.discard(r)
		a.forget(r)
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: handler failed after its lease was lost; the task runs again elsewhere",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id), slog.Any("error", err))
	case cause == errClosing:
		a.discard(r)
		a.giveBack(r)
	case cause == ErrCanceled:
		a.discard(r)
		a.report(worker, r, err, true)
		a.deadLetter(worker, r, ReasonCanceled, err, 0)
	default:
		a.fail(worker, r, err)
	}
	return nil
}

// call runs the handler, turning a panic into an *actor.PanicError. A
// handler that calls runtime.Goexit ends the worker; work's deferred
// afterGoexit settles its task.
func (a *Actor[T]) call(ctx context.Context, r *lease, payload T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &actor.PanicError{Func: "handler", Value: v, Stack: debug.Stack()}
		}
	}()
	return a.handler(ctx, taskOf(r, payload))
}

// fail settles a failed attempt: a retry after the backoff, or the dead
// letters when the error is permanent or the attempts are spent.
func (a *Actor[T]) fail(worker string, r *lease, err error) {
	a.discard(r)
	permanent := errors.Is(err, actor.ErrPermanent)
	final := permanent || r.attempt >= a.set.maxAttempts
	a.report(worker, r, err, final)
	switch {
	case permanent:
		a.deadLetter(worker, r, ReasonPermanent, err, 0)
	case final:
		a.deadLetter(worker, r, ReasonMaxAttempts, err, 0)
	default:
		d := a.set.backoff.Delay(r.attempt, rand.Float64())
		if a.settle(worker, r, "retry", func(ctx context.Context) (int, error) { return a.store.retry(ctx, r, d, err.Error()) }) {
			a.retryAt(time.Now().Add(d))
		}
	}
}

// discard rolls back the task's transaction, if the handler began one.
func (a *Actor[T]) discard(r *lease) {
	if tx := r.htx.end(); tx != nil {
		ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
		defer cancel()
		tx.Rollback(ctx)
	}
}

// deadLetter moves r's task to the dead letters; notRun is 1 when this run
// did not reach the handler.
func (a *Actor[T]) deadLetter(worker string, r *lease, reason Reason, err error, notRun int) {
	if notRun == 1 {
		a.report(worker, r, notRunError(reason, err), true)
	}
	var msg *string
	if err != nil {
		s := err.Error()
		msg = &s
	}
	a.settle(worker, r, "dead-letter", func(ctx context.Context) (int, error) { return a.store.deadLetter(ctx, r, reason, msg, notRun == 0) })
}

// notRunError is what the error handler receives for a task dead-lettered
// without running.
func notRunError(reason Reason, err error) error {
	switch {
	case err != nil:
		return err
	case reason == ReasonLost:
		return errors.New("pgactor: the task's workers were lost too many times (Config.MaxLost)")
	default:
		return ErrCanceled
	}
}

// report hands a failure to the error handler.
func (a *Actor[T]) report(worker string, r *lease, err error, final bool) {
	te := &actor.TaskError{Actor: a.name, Worker: worker, ID: uint64(r.id), Type: r.typ, Attempt: r.attempt, Final: final, Err: err}
	defer func() {
		if v := recover(); v != nil {
			a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: error handler panicked",
				slog.String("actor", a.name), slog.String("worker", worker), slog.Any("panic", v))
		}
	}()
	a.onError(te)
}

// settle runs a statement that ends or releases r's lease, retrying it
// while the lease may still be this process's, and reports whether it
// matched the lease. A statement that matches nothing means the lease
// passed to another worker: the result is refused, and logged.
func (a *Actor[T]) settle(worker string, r *lease, what string, statement func(ctx context.Context) (int, error)) bool {
	defer a.forget(r)
	var n int
	err := a.retryWhileLeased(r, func(ctx context.Context) (err error) {
		n, err = statement(ctx)
		return err
	})
	switch {
	case err != nil:
		a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not record a task's outcome; it runs again once its lease runs out",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id), slog.String("outcome", what), slog.Any("error", err))
		return false
	case n == 0:
		a.refused(worker, r, what)
		return false
	}
	return true
}

// refused logs a result that the database refused because the lease had
// passed to another worker.
func (a *Actor[T]) refused(worker string, r *lease, what string) {
	a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: result refused: the task's lease passed to another worker",
		slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id), slog.Int("run", int(r.token)), slog.String("outcome", what))
}

// retryWhileLeased calls fn with a bounded context until it succeeds or
// r's lease has run out, spacing the calls out.
func (a *Actor[T]) retryWhileLeased(r *lease, fn func(ctx context.Context) error) error {
	delay := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
		err := fn(ctx)
		cancel()
		if err == nil {
			return nil
		}
		a.mu.Lock()
		deadline := r.deadline
		a.mu.Unlock()
		if time.Until(deadline) < delay {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, time.Second)
	}
}

// release forgets r's lease.
func (a *Actor[T]) release(r *lease) {
	a.mu.Lock()
	if !r.forgotten {
		r.forgotten = true
		delete(a.leases, r.id)
	}
	a.mu.Unlock()
}

// retryAt has the fetcher look for tasks at t, when this process's retry
// is due, rather than at its next poll.
func (a *Actor[T]) retryAt(t time.Time) {
	a.mu.Lock()
	if a.wakeAt.IsZero() || t.Before(a.wakeAt) {
		a.wakeAt = t
	}
	a.mu.Unlock()
	a.poke()
}
