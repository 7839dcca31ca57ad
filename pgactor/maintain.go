package pgactor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
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
		case <-a.stop:
			return
		case <-t.C:
			// Close does not wait for a VACUUM: the server finishes it.
			ctx, cancel := context.WithTimeout(context.Background(), maintainTimeout)
			stop := context.AfterFunc(a.stopCtx, cancel)
			if _, err := a.maintain(ctx); err != nil && a.stopCtx.Err() == nil {
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
	var won int
	err = a.pool.QueryRow(ctx, a.q.maintainElect, a.set.maintainEach.Microseconds(), maintainTimeout.Microseconds()).Scan(&won)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("elect: %w", err)
	}
	defer func() {
		// Let the next round elect anyone at once; on a failure here the
		// turn ends at busy_until.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		a.pool.Exec(dctx, a.q.maintainDone)
	}()
	if _, err := a.pool.Exec(ctx, a.q.fold); err != nil {
		return nil, fmt.Errorf("fold the counters: %w", err)
	}
	if !a.set.vacuum {
		return nil, nil
	}
	return a.vacuum(ctx)
}

// vacuum vacuums and analyzes the schema's tables that need it (see
// tableCare): with autovacuum off, nothing else does.
func (a *Actor[T]) vacuum(ctx context.Context) ([]string, error) {
	rows, err := a.pool.Query(ctx, sqlDeadTuples, a.set.schema)
	if err != nil {
		return nil, fmt.Errorf("read dead rows: %w", err)
	}
	var tables, commands []string
	for rows.Next() {
		var name string
		var dead, live, changed int64
		var sinceAnalyze float64 // seconds, or +Inf if never analyzed
		if err := rows.Scan(&name, &dead, &live, &changed, &sinceAnalyze); err != nil {
			rows.Close()
			return nil, err
		}
		table := pgx.Identifier{a.set.schema, name}.Sanitize()
		vacuum, analyze := tableCare(dead, live, changed, time.Duration(min(sinceAnalyze, 1e6)*float64(time.Second)))
		switch {
		case vacuum && analyze:
			tables = append(tables, name)
			commands = append(commands, "VACUUM (ANALYZE) "+table)
		case vacuum:
			tables = append(tables, name)
			commands = append(commands, "VACUUM "+table)
		case analyze:
			commands = append(commands, "ANALYZE "+table)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read dead rows: %w", err)
	}
	for _, c := range commands {
		// VACUUM cannot run in a transaction: on its own, it runs in
		// none.
		if _, err := a.pool.Exec(ctx, c); err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
	}
	return tables, nil
}
