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
// schema's tables as tableCare decides.
const (
	defaultMaintainEach = time.Second
	vacuumMinDead       = 1000
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

// maintainLoop is the maintenance goroutine.
func (a *Actor[T]) maintainLoop() {
	defer a.bgWG.Done()
	t := time.NewTicker(a.set.maintainEach)
	defer t.Stop()
	for {
		select {
		case <-a.shut.stopping:
			return
		case <-t.C:
			// Close does not wait for a VACUUM: the server finishes it.
			ctx, cancel := context.WithTimeout(context.Background(), maintainTimeout)
			stop := context.AfterFunc(a.shut.stoppingCtx, cancel)
			if _, err := a.maintain(ctx); err != nil && a.shut.stoppingCtx.Err() == nil {
				a.log.LogAttrs(ctx, slog.LevelWarn, "pgactor: maintenance failed",
					slog.String("actor", a.name), slog.String("schema", a.set.schema), slog.Any("error", err))
			}
			stop()
			cancel()
		}
	}
}

// maintain runs a round of maintenance if this process wins the election,
// and returns the tables it vacuumed.
func (a *Actor[T]) maintain(ctx context.Context) (vacuumed []string, err error) {
	won, err := a.store.electMaintainer(ctx, a.set.maintainEach, maintainTimeout)
	if err != nil {
		return nil, fmt.Errorf("elect: %w", err)
	}
	if !won {
		return nil, nil
	}
	defer func() {
		// Let the next round elect anyone at once; on a failure here the
		// turn ends at busy_until.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		a.store.maintainDone(dctx)
	}()
	if err := a.store.fold(ctx); err != nil {
		return nil, fmt.Errorf("fold the counters: %w", err)
	}
	if _, err := a.store.dropEndedPeriods(ctx); err != nil {
		return nil, fmt.Errorf("delete the periods that ended: %w", err)
	}
	if !a.set.vacuum {
		return nil, nil
	}
	return a.vacuum(ctx)
}

// vacuum vacuums and analyzes the schema's tables that need it (see
// tableCare): with autovacuum off, nothing else does.
func (a *Actor[T]) vacuum(ctx context.Context) ([]string, error) {
	tables, err := a.store.tableStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("read dead rows: %w", err)
	}
	var vacuumed []string
	for _, t := range tables {
		vacuum, analyze := tableCare(t.dead, t.live, t.changed, t.sinceAnalyze)
		if !vacuum && !analyze {
			continue
		}
		if command, err := a.store.care(ctx, t.name, vacuum, analyze); err != nil {
			return nil, fmt.Errorf("%s: %w", command, err)
		}
		if vacuum {
			vacuumed = append(vacuumed, t.name)
		}
	}
	return vacuumed, nil
}
