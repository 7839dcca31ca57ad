package pgactor

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Maintenance keeps the tables small. Every task inserts, updates and
// deletes rows, and every counter increment inserts one, so the tables
// hold dead row versions that only VACUUM makes room from; a server with
// autovacuum on does it by itself, one with it off (or too slow for a
// queue's churn) grows its tables without end. So every
// Config.MaintenanceInterval one process — elected by a one-row UPDATE that
// a second process waits for and then finds done, and that no other
// process wins until the first has finished — folds the counters'
// increments into one row per actor, and vacuums and analyzes the
// schema's tables as tableCare decides. A round that vacuumed more than
// vacuumBudget dead rows brings the next rounds sooner (maintainPace):
// a queue's churn grows with the machine, and a fixed interval would let
// a faster machine leave more dead rows between vacuums, and so bigger
// tables.
const (
	defaultMaintainEach = time.Second
	vacuumMinDead       = 1000
	vacuumBudget        = 25_000
	analyzeEvery        = time.Minute
	maintainTimeout     = time.Minute // bounds a round, and the elected process's turn
)

// tableCare decides what a table needs from the counts the statistics
// collector keeps: a VACUUM when its dead rows exceed vacuumMinDead and a
// fifth of its live ones, and an ANALYZE when its changes since its last
// analysis exceed vacuumMinDead and a tenth of its live rows, at most once
// every analyzeEvery. A queue's tables change wholly every few seconds
// under load, so the changes alone would ask for an ANALYZE every round,
// for statistics that a minute does not change much; VACUUM keeps the
// row counts that the planner reads up to date in between.
func tableCare(dead, live, changed int64, sinceAnalyze time.Duration) (vacuum, analyze bool) {
	vacuum = dead > vacuumMinDead && dead > live/5
	analyze = changed > vacuumMinDead && changed > live/10 && sinceAnalyze >= analyzeEvery
	return vacuum, analyze
}

// A maintainPace paces the maintenance rounds: one every
// Config.MaintenanceInterval (every), or, for an interval of every after a
// round that vacuumed more than vacuumBudget dead rows, sooner in
// proportion, so that about vacuumBudget rows die between vacuums; at most
// 8 times as often, since a VACUUM reads the whole table and its indexes.
//
// The short interval holds for all of every, not only until the next
// round: the dead rows a round reads are the server's statistics, which a
// busy backend reports about once a second, so the rounds that come
// sooner mostly find few rows reported and vacuum nothing. Going back to
// every after such a round — as pgactor did — left a steady churn
// vacuumed about once in every and the tables sized by it
// (docs/benchmarks.md, "Maintenance that keeps its pace").
type maintainPace struct {
	every time.Duration
	short time.Duration // the interval a big vacuum called for
	until time.Time     // when it ends: every after that vacuum
}

// next returns how long after a round, ending at now, that vacuumed a
// table of dead rows (the most of any table it vacuumed; 0 for none) the
// next round comes.
func (c *maintainPace) next(now time.Time, dead int64) time.Duration {
	if dead > vacuumBudget {
		c.short = max(c.every*vacuumBudget/time.Duration(dead), c.every/8)
		c.until = now.Add(c.every)
	}
	if now.Before(c.until) {
		return c.short
	}
	return c.every
}

// maintainLoop is the maintenance goroutine.
func (a *Actor[T]) maintainLoop() {
	defer a.bgWG.Done()
	pace := &maintainPace{every: a.set.maintainEach}
	every := pace.every
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-a.shut.stopping:
			return
		case <-t.C:
			// Close does not wait for a VACUUM: the server finishes it.
			ctx, cancel := context.WithTimeout(context.Background(), maintainTimeout)
			stop := context.AfterFunc(a.shut.stoppingCtx, cancel)
			dead, err := a.maintain(ctx, every)
			if err != nil && a.shut.stoppingCtx.Err() == nil {
				a.log.LogAttrs(ctx, slog.LevelWarn, "pgactor: maintenance failed",
					slog.String("actor", a.name), slog.String("schema", a.set.schema), slog.Any("error", err))
			}
			stop()
			cancel()
			every = pace.next(time.Now(), dead)
			t.Reset(every)
		}
	}
}

// maintain runs a round of maintenance if this process wins the election,
// which no process does within every of the last round, and returns the
// most dead rows of the tables it vacuumed.
func (a *Actor[T]) maintain(ctx context.Context, every time.Duration) (dead int64, err error) {
	won, err := a.store.electMaintainer(ctx, every, maintainTimeout)
	if err != nil {
		return 0, fmt.Errorf("elect: %w", err)
	}
	if !won {
		return 0, nil
	}
	defer func() {
		// Let the next round elect anyone at once; on a failure here the
		// turn ends at busy_until.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		a.store.maintainDone(dctx)
	}()
	if err := a.store.fold(ctx); err != nil {
		return 0, fmt.Errorf("fold the counters: %w", err)
	}
	if _, err := a.store.dropEndedPeriods(ctx); err != nil {
		return 0, fmt.Errorf("delete the periods that ended: %w", err)
	}
	if !a.set.vacuum {
		return 0, nil
	}
	return a.vacuum(ctx)
}

// vacuum vacuums and analyzes the schema's tables that need it (see
// tableCare): with autovacuum off, nothing else does. It returns the most
// dead rows of the tables it vacuumed.
func (a *Actor[T]) vacuum(ctx context.Context) (dead int64, err error) {
	tables, err := a.store.tableStats(ctx)
	if err != nil {
		return 0, fmt.Errorf("read dead rows: %w", err)
	}
	for _, t := range tables {
		vacuum, analyze := tableCare(t.dead, t.live, t.changed, t.sinceAnalyze)
		if !vacuum && !analyze {
			continue
		}
		if command, err := a.store.care(ctx, t.name, vacuum, analyze); err != nil {
			return dead, fmt.Errorf("%s: %w", command, err)
		}
		if vacuum {
			dead = max(dead, t.dead)
		}
	}
	return dead, nil
}
