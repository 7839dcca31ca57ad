package pgactor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// The scheduler runs in every instance of an actor, send-only ones too:
// no process is its leader, so none can be lost. Each one wakes when the
// earliest of the actor's schedules is due, by the database's clock, or
// every Config.PollInterval at the latest (a schedule another process
// made), and fires the due schedules in one transaction: it takes their
// rows with FOR UPDATE SKIP LOCKED, so that a schedule another process is
// firing is left to it, sends each one's task for its period — guarded by
// the period's row in unique_periods, so that a period is sent once even
// by a transaction run twice — and moves its next fire time past now. A
// process killed in the middle holds its rows until the server sees its
// connection close and rolls the transaction back; the next scheduler to
// wake fires them.

// pointFired is the fault point after the scheduler sent tasks, before
// its transaction commits (see hooks.go).
const pointFired = "fired"

// scheduleBatch bounds the schedules one transaction fires.
const scheduleBatch = 100

// scheduledHook, when set by a test, is told of each task the scheduler
// sent, once its transaction has committed.
var scheduledHook func(actor, name string, period time.Time, id uint64)

// scheduleLoop is the scheduler's goroutine.
func (a *Actor[T]) scheduleLoop() {
	defer a.bgWG.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-a.shut.stopping:
			return
		case <-a.schedWake:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(a.shut.stoppingCtx, maintainTimeout)
		d, err := a.runSchedules(ctx)
		cancel()
		if err != nil && a.shut.stoppingCtx.Err() == nil {
			a.log.LogAttrs(ctx, slog.LevelWarn, "pgactor: scheduler failed",
				slog.String("actor", a.name), slog.String("schema", a.set.schema), slog.Any("error", err))
		}
		t.Reset(schedulerWait(d, err, a.set.poll))
	}
}

// heldRetry is how soon the scheduler looks again at a schedule that is
// due but that another process is firing: that process may die holding
// it, and is then rolled back once the server sees its connection close.
const heldRetry = 50 * time.Millisecond

// schedulerWait returns how long the scheduler sleeps after a round that
// found the next schedule due in d (negative: none), or failed with err:
// until then, or poll at the most. A schedule still due after the round
// (d is 0) is held by another process's scheduler; the scheduler looks
// again after heldRetry rather than at once, which would spin as long as
// the other holds it.
func schedulerWait(d time.Duration, err error, poll time.Duration) time.Duration {
	switch {
	case err != nil || d < 0:
		return poll
	case d == 0:
		return min(heldRetry, poll)
	}
	return min(d, poll)
}

// runSchedules fires the actor's due schedules, and returns how long until
// the next one is due; negative when there is none.
func (a *Actor[T]) runSchedules(ctx context.Context) (time.Duration, error) {
	for {
		n, err := a.fireDue(ctx)
		if err != nil {
			return 0, err
		}
		if n < scheduleBatch {
			break
		}
	}
	return a.store.untilNext(ctx)
}

// A firing is a task the scheduler sent.
type firing struct {
	name   string
	period time.Time
	id     uint64
}

// fireDue fires, in one transaction, up to scheduleBatch due schedules
// that no other process is firing, and returns how many it took.
func (a *Actor[T]) fireDue(ctx context.Context) (int, error) {
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	due, err := a.store.dueSchedules(ctx, tx, scheduleBatch)
	if err != nil {
		return 0, fmt.Errorf("take the due schedules: %w", err)
	}
	var sent []firing
	for _, d := range due {
		var period, until, next time.Time
		c, err := parseSpec(d.spec)
		if err != nil {
			// Stored by a version whose parser took it: it fires no more,
			// and says why, rather than failing every round.
			a.log.LogAttrs(ctx, slog.LevelError, "pgactor: schedule's spec no longer parses; it is stopped",
				slog.String("actor", a.name), slog.String("schedule", d.name), slog.Any("error", err))
		} else {
			var send bool
			period, send, next = plan(c, d.due, d.now, d.missed)
			if send {
				until = c.next(period)
			} else {
				period = time.Time{}
			}
		}
		id, err := a.store.fire(ctx, tx, d.name, period, until, next)
		if err != nil {
			return 0, fmt.Errorf("fire schedule %q: %w", d.name, err)
		}
		if id != 0 {
			sent = append(sent, firing{d.name, period, id})
		}
	}
	if len(sent) > 0 {
		fault(pointFired)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	for _, f := range sent {
		if h := scheduledHook; h != nil {
			h(a.name, f.name, f.period, f.id)
		}
	}
	if len(sent) > 0 && a.handler != nil {
		a.poke()
	}
	return len(due), nil
}

// Headers of a scheduled task: the schedule and the period it was sent
// for.
const (
	HeaderSchedule = "pgactor-schedule"
	HeaderPeriod   = "pgactor-period"
)

// periodHeaders returns the headers of schedule name's task for period.
func periodHeaders(name string, period time.Time) string {
	b, _ := json.Marshal(map[string]string{HeaderSchedule: name, HeaderPeriod: period.UTC().Format(time.RFC3339Nano)})
	return string(b)
}
