package pgactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Settling: what becomes of a task once its handler returns is decided
// here, by what became of it, whoever then runs the statement — the
// pump's round for a completion, the worker for the rest:
//
//   - the handler succeeded: completed (complete; completeTx when it
//     began a transaction)
//   - it failed: retried after the Backoff, or dead-lettered when the
//     error is permanent or the attempts are spent (fail)
//   - it returned Snooze: due again after its delay, the attempt not
//     charged (snooze)
//   - Cancel canceled it: dead-lettered (deadLetter)
//   - Close stopped waiting for it: its lease given back (giveBack)
//   - its lease was lost: nothing, since another worker may hold the task
//     now (lost)
//
// A statement whose lease was fenced off is refused (fence.go). Each path
// ends by forgetting the lease.

// settle records what became of l's task once its handler returned err,
// and returns the worker's next task when the round that committed the
// completion fetched one for it.
func (a *Actor[T]) settle(worker string, l *lease, err error) *lease {
	switch cause := context.Cause(l.ctx); {
	case err == nil:
		return a.complete(worker, l)
	case cause == ErrLeaseLost:
		a.lost(worker, l, err)
	case cause == errClosing:
		a.discard(l)
		a.giveBack(l)
		l.trace.settled(OutcomeGivenBack)
	case cause == ErrCanceled:
		a.discard(l)
		a.report(worker, l, err, true, func() { a.deadLetter(worker, l, ReasonCanceled, err, true) })
	case snoozed(err) != nil:
		a.snooze(worker, l, snoozed(err).Delay)
	default:
		a.fail(worker, l, err)
	}
	return nil
}

// complete records the success of l's task: in the handler's transaction
// if it began one, else in the pump's next round. It returns once the
// completion has committed, or has been refused or has failed, with the
// worker's next task if the round fetched one.
func (a *Actor[T]) complete(worker string, l *lease) *lease {
	if tx := l.htx.end(); tx != nil {
		a.completeTx(worker, l, tx)
		return nil
	}
	defer a.forget(l)
	a.mu.Lock()
	if a.shut.phase() >= phaseDraining {
		a.mu.Unlock()
		l.trace.settled(OutcomeGivenBack)
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: handler returned after Close gave its task back; the task runs again",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id))
		return nil
	}
	s := &settling{l: l, reply: make(chan outcome, 1)}
	a.settling <- s // never blocks: it holds a place per worker
	a.mu.Unlock()
	o := <-s.reply
	switch {
	case o.err == nil:
		l.trace.settled(OutcomeCompleted)
	case errors.Is(o.err, errRefused):
		a.refused(worker, l, "complete")
	case o.err != nil:
		a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not record a completion; the task runs again once its lease runs out",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id), slog.Any("error", o.err))
	}
	return o.next
}

// completeTx completes l's task in the handler's transaction and commits
// it, so that the handler's writes and the completion happen together or
// not at all. A transaction that surely did not commit — its completion
// failed, so it was rolled back, or the server refused the commit (a
// deferred constraint, a serialization failure) — is a failed attempt,
// retried or dead-lettered as fail says; one whose commit was cut off may
// have committed, and is left to its lease.
func (a *Actor[T]) completeTx(worker string, l *lease, tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	n, err := a.store.completeOne(ctx, tx, l)
	if err == nil && n == 1 {
		fault(pointCommit)
		err = tx.Commit(ctx)
		if err == nil {
			a.forget(l)
			l.trace.settled(OutcomeCompleted)
			return
		}
		if _, refused := errors.AsType[*pgconn.PgError](err); refused || errors.Is(err, pgx.ErrTxCommitRollback) {
			a.fail(worker, l, fmt.Errorf("pgactor: commit the task's transaction: %w", err))
			return
		}
	} else {
		tx.Rollback(ctx)
		if err != nil {
			a.fail(worker, l, fmt.Errorf("pgactor: complete the task in its transaction: %w", err))
			return
		}
	}
	defer a.forget(l)
	if err == nil {
		a.refused(worker, l, "complete")
		return
	}
	a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not commit a task's transaction; its writes may not have been made, and it runs again once its lease runs out",
		slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id), slog.Any("error", err))
}

// fail settles a failed attempt: a retry after the backoff, or the dead
// letters when the error is permanent or the attempts are spent.
func (a *Actor[T]) fail(worker string, l *lease, err error) {
	a.discard(l)
	permanent := errors.Is(err, actor.ErrPermanent)
	final := permanent || l.attempt >= a.set.maxAttempts
	a.report(worker, l, err, final, func() {
		switch {
		case permanent:
			a.deadLetter(worker, l, ReasonPermanent, err, true)
		case final:
			a.deadLetter(worker, l, ReasonMaxAttempts, err, true)
		default:
			d := a.set.backoff.Delay(l.attempt, rand.Float64())
			if a.record(worker, l, "retry", func(ctx context.Context) (int, error) { return a.store.retry(ctx, l, d, err.Error()) }) {
				l.trace.settled(OutcomeRetried)
				a.retryAt(time.Now().Add(d))
			}
		}
	})
}

// retryAt has the pump look for tasks at t, when this process's retry is
// due, rather than at its next poll. A wake-up time already passed gives
// way to t: the poke has the pump fetch now, which takes the task due
// then, and keeping the passed time instead would have the next fetch
// clear it and wait a whole poll for the task due at t.
func (a *Actor[T]) retryAt(t time.Time) {
	a.mu.Lock()
	if a.wakeAt.IsZero() || t.Before(a.wakeAt) || !time.Now().Before(a.wakeAt) {
		a.wakeAt = t
	}
	a.mu.Unlock()
	a.poke()
}

// deadLetter moves l's task to the dead letters; ran says whether this
// run reached the handler, which then counts as a failed attempt. A task
// dead-lettered without running is reported to the error handler here.
func (a *Actor[T]) deadLetter(worker string, l *lease, reason Reason, err error, ran bool) {
	letter := func() {
		var msg *string
		if err != nil {
			s := err.Error()
			msg = &s
		}
		if a.record(worker, l, "dead-letter", func(ctx context.Context) (int, error) { return a.store.deadLetter(ctx, l, reason, msg, ran) }) {
			l.trace.deadLettered(reason)
		}
	}
	if ran {
		letter()
		return
	}
	notRun := notRunError(reason, err)
	l.trace.failed(notRun)
	a.report(worker, l, notRun, true, letter)
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

// report hands a failure to the error handler, then runs then, which
// settles the task. then is deferred, so that the task is settled even
// when OnError ends the worker with runtime.Goexit (as t.FailNow does):
// left unsettled, it stayed held, its lease renewed, until Close.
func (a *Actor[T]) report(worker string, l *lease, err error, final bool, then func()) {
	defer then()
	te := &actor.TaskError{Actor: a.name, Worker: worker, ID: uint64(l.id), Type: l.typ, Attempt: l.attempt, Final: final, Err: err}
	defer func() {
		if v := recover(); v != nil {
			// The failure it was given goes with it: a retried attempt is
			// recorded nowhere else.
			a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: error handler panicked",
				append(te.Attrs(), slog.Any("panic", v))...)
		}
	}()
	a.onError(te)
}

// lost forgets l, whose lease was lost while its handler ran: another
// worker may hold the task now, and nothing this one does with it would
// be accepted.
func (a *Actor[T]) lost(worker string, l *lease, err error) {
	a.discard(l)
	a.forget(l)
	a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: handler failed after its lease was lost; the task runs again elsewhere",
		slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id), slog.Any("error", err))
}

// giveBack has the pump give l back at once, without charging the
// attempt. After Close stopped the pump, giveBackAll gives it back.
func (a *Actor[T]) giveBack(l *lease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shut.phase() >= phaseDraining || l.forgotten {
		return
	}
	a.settling <- &settling{l: l, giveBack: true}
}

// giveBackAll gives back every lease this instance still holds, at Close
// once the pump has stopped.
func (a *Actor[T]) giveBackAll() error {
	a.mu.Lock()
	var held []*lease
	for _, l := range a.leases {
		l.forgotten = true
		l.cancel(errClosing)
		held = append(held, l)
	}
	clear(a.leases)
	a.mu.Unlock()
	if len(held) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	b := &pgx.Batch{}
	a.store.giveBack(b, held)
	if err := a.store.runBatch(ctx, b); err != nil {
		return fmt.Errorf("pgactor: actor %q: give back %d tasks at Close (they run again once their leases run out): %w", a.name, len(held), err)
	}
	return nil
}

// discard rolls back the task's transaction, if the handler began one.
func (a *Actor[T]) discard(l *lease) {
	if tx := l.htx.end(); tx != nil {
		ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
		defer cancel()
		tx.Rollback(ctx)
	}
}

// record runs statement, which settles l — a retry or a dead letter —
// retrying it while the lease may still be this process's, then forgets
// l, and reports whether the statement matched the lease. One that matches
// nothing was fenced off: the lease passed to another worker, and the
// result is refused, and logged.
func (a *Actor[T]) record(worker string, l *lease, what string, statement func(ctx context.Context) (int, error)) bool {
	defer a.forget(l)
	var n int
	err := a.retryWhileLeased(l, func(ctx context.Context) (err error) {
		n, err = statement(ctx)
		return err
	})
	switch {
	case err != nil:
		a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not record a task's outcome; it runs again once its lease runs out",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id), slog.String("outcome", what), slog.Any("error", err))
		return false
	case n == 0:
		a.refused(worker, l, what)
		return false
	}
	return true
}

// retryWhileLeased calls fn with a bounded context until it succeeds or
// l's lease has run out, spacing the calls out.
func (a *Actor[T]) retryWhileLeased(l *lease, fn func(ctx context.Context) error) error {
	delay := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
		err := fn(ctx)
		cancel()
		if err == nil {
			return nil
		}
		a.mu.Lock()
		deadline := l.deadline
		a.mu.Unlock()
		if time.Until(deadline) < delay {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, time.Second)
	}
}
