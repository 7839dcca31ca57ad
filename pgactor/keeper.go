package pgactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// The keeper is one goroutine per actor instance that runs every statement
// touching many of the instance's leases at once: the heartbeat, the group
// completions, the give-backs. Being one goroutine, those statements never
// wait on each other's row locks, so they cannot deadlock; and while one
// runs, the completions of the workers that finish meanwhile gather for
// the next, so that many commit in one transaction and one round trip
// (group commit), and each worker still waits until its own has committed
// before it takes another task.

// maxGroup bounds how many completions one statement commits.
const maxGroup = 1000

// errRefused is a completion's outcome when its lease had passed to
// another worker.
var errRefused = errors.New("pgactor: lease passed to another worker")

// keep is the keeper's goroutine.
func (a *Actor[T]) keep() {
	defer a.bgWG.Done()
	defer close(a.keeperExit)
	t := time.NewTicker(a.set.heartbeat)
	defer t.Stop()
	for {
		select {
		case s := <-a.done:
			a.settleGroup(s)
		case <-t.C:
			a.heartbeat()
		case <-a.keeper:
			// The workers are done or abandoned, and no more work
			// comes: finish what came.
			for {
				select {
				case s := <-a.done:
					a.settleGroup(s)
				default:
					return
				}
			}
		}
	}
}

// complete records r's success: in the handler's transaction if it began
// one, else in the keeper's next group. It returns once the completion has
// committed, or has been refused or has failed.
func (a *Actor[T]) complete(worker string, r *run[T]) {
	if tx := r.state.end(); tx != nil {
		a.completeTx(worker, r, tx)
		return
	}
	defer a.release(r)
	a.mu.Lock()
	if a.keeperClosed {
		a.mu.Unlock()
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: handler returned after Close gave its task back; the task runs again",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id))
		return
	}
	s := &settling{id: r.id, runs: r.runs, deadline: r.deadline, reply: make(chan error, 1)}
	a.done <- s // never blocks: it holds a place per worker
	a.mu.Unlock()
	switch err := <-s.reply; {
	case errors.Is(err, errRefused):
		a.refused(worker, r, "complete")
	case err != nil:
		a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not record a completion; the task runs again once its lease runs out",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id), slog.Any("error", err))
	}
}

// completeTx deletes r's row in the handler's transaction and commits it,
// so that the handler's writes and the completion happen together or not
// at all.
func (a *Actor[T]) completeTx(worker string, r *run[T], tx pgx.Tx) {
	defer a.release(r)
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	var n int
	err := tx.QueryRow(ctx, a.q.completeOne, r.id, r.runs, a.owner, a.name).Scan(&n)
	if err == nil && n == 1 {
		fault(pointCommit)
		err = tx.Commit(ctx)
		if err == nil {
			return
		}
	} else {
		tx.Rollback(ctx)
	}
	if err == nil {
		a.refused(worker, r, "complete")
		return
	}
	a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not commit a task's transaction; its writes were not made, and it runs again once its lease runs out",
		slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id), slog.Any("error", err))
}

// giveBack has the keeper release r's lease at once, without charging the
// attempt. After Close stopped the keeper, giveBackAll releases it.
func (a *Actor[T]) giveBack(r *run[T]) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keeperClosed || r.released {
		return
	}
	r.released = true
	delete(a.leases, r.id)
	a.done <- &settling{id: r.id, runs: r.runs, giveBack: true, deadline: r.deadline}
}

// settleGroup runs first and what else waits, in at most two statements.
func (a *Actor[T]) settleGroup(first *settling) {
	var done, back []*settling
	add := func(s *settling) {
		if s.giveBack {
			back = append(back, s)
		} else {
			done = append(done, s)
		}
	}
	add(first)
gather:
	for len(done)+len(back) < maxGroup {
		select {
		case s := <-a.done:
			add(s)
		default:
			break gather
		}
	}
	if len(done) > 0 {
		a.completeGroup(done)
	}
	if len(back) > 0 {
		if err := a.giveBackGroup(back); err != nil {
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: could not give tasks back; they run again once their leases run out",
				slog.String("actor", a.name), slog.Int("tasks", len(back)), slog.Any("error", err))
		}
	}
}

// completeGroup deletes the rows of completed tasks in one statement,
// retried while their leases may still be this process's, and tells each
// worker its outcome.
func (a *Actor[T]) completeGroup(group []*settling) {
	ids, runs := make([]int64, len(group)), make([]int32, len(group))
	last := group[0].deadline
	for i, s := range group {
		ids[i], runs[i] = s.id, s.runs
		if s.deadline.After(last) {
			last = s.deadline
		}
	}
	deleted := make(map[int64]bool, len(group))
	delay := 50 * time.Millisecond
	for {
		err := a.queryEach(a.q.complete, func(rows pgx.Rows) error {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			deleted[id] = true
			return nil
		}, ids, runs, a.owner, a.name)
		if err == nil {
			for _, s := range group {
				if deleted[s.id] {
					s.reply <- nil
				} else {
					s.reply <- errRefused
				}
			}
			return
		}
		clear(deleted)
		if time.Until(last) < delay {
			for _, s := range group {
				s.reply <- err
			}
			return
		}
		time.Sleep(delay)
		delay = min(2*delay, time.Second)
	}
}

// giveBackGroup releases leases in one statement.
func (a *Actor[T]) giveBackGroup(group []*settling) error {
	ids, runs := make([]int64, len(group)), make([]int32, len(group))
	for i, s := range group {
		ids[i], runs[i] = s.id, s.runs
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	_, err := a.pool.Exec(ctx, a.q.giveBack, ids, runs, a.owner)
	return err
}

// giveBackAll releases every lease this instance still holds, at Close
// once the keeper has stopped.
func (a *Actor[T]) giveBackAll() error {
	a.mu.Lock()
	var group []*settling
	for id, r := range a.leases {
		r.released = true
		r.cancel(errClosing)
		group = append(group, &settling{id: id, runs: r.runs})
	}
	clear(a.leases)
	a.mu.Unlock()
	if len(group) == 0 {
		return nil
	}
	if err := a.giveBackGroup(group); err != nil {
		return fmt.Errorf("pgactor: actor %q: give back %d tasks at Close (they run again once their leases run out): %w", a.name, len(group), err)
	}
	return nil
}

// heartbeat extends the leases this instance holds, in one statement. A
// lease the statement no longer finds passed to another worker: its
// handler's context is cancelled with ErrLeaseLost. A task marked canceled
// has its handler's context cancelled with ErrCanceled. A lease not
// renewed in time — the server unreachable — is taken as lost too.
func (a *Actor[T]) heartbeat() {
	a.mu.Lock()
	ids, runs := make([]int64, 0, len(a.leases)), make([]int32, 0, len(a.leases))
	for id, r := range a.leases {
		ids, runs = append(ids, id), append(runs, r.runs)
	}
	a.mu.Unlock()
	sent := time.Now()
	if len(ids) > 0 {
		held := make(map[int64]bool, len(ids)) // id → canceled
		err := a.queryEach(a.q.heartbeat, func(rows pgx.Rows) error {
			var id int64
			var canceled bool
			if err := rows.Scan(&id, &canceled); err != nil {
				return err
			}
			held[id] = canceled
			return nil
		}, ids, runs, a.owner, a.set.lease.Microseconds())
		if err != nil {
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: heartbeat failed",
				slog.String("actor", a.name), slog.Int("leases", len(ids)), slog.Any("error", err))
		} else {
			a.mu.Lock()
			for i, id := range ids {
				r := a.leases[id]
				if r == nil || r.runs != runs[i] {
					continue // settled meanwhile
				}
				canceled, ok := held[id]
				switch {
				case !ok:
					r.cancel(ErrLeaseLost)
				case canceled:
					r.deadline = sent.Add(a.set.lease)
					r.cancel(ErrCanceled)
				default:
					r.deadline = sent.Add(a.set.lease)
				}
			}
			a.mu.Unlock()
		}
	}
	a.mu.Lock()
	for _, r := range a.leases {
		if sent.After(r.deadline) {
			r.cancel(ErrLeaseLost)
		}
	}
	a.mu.Unlock()
}

// queryEach runs sql under a bounded context and calls scan for each row.
func (a *Actor[T]) queryEach(sql string, scan func(pgx.Rows) error, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	rows, err := a.pool.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
