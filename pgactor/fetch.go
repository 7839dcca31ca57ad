package pgactor

import (
	"context"
	"log/slog"
	"time"
)

// fetchLoop is the fetcher's goroutine: it takes as many due tasks as this
// process has idle workers (or may start), up to Config.FetchBatch, in one
// statement, hands them to the workers, and when fewer were due waits for
// a notification, a local send, a retry of its own falling due, or the
// next poll.
func (a *Actor[T]) fetchLoop() {
	defer a.bgWG.Done()
	defer close(a.fetcherExit)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	errDelay := time.Duration(0)
	for {
		select {
		case <-a.stop:
			return
		default:
		}
		fromIdle, want := a.reserve()
		if want == 0 {
			select {
			case <-a.free:
				continue
			case <-a.stop:
				return
			}
		}
		runs, err := a.fetch(want)
		if err != nil {
			a.mu.Lock()
			a.idle += fromIdle
			a.mu.Unlock()
			errDelay = min(max(2*errDelay, 50*time.Millisecond), a.set.poll)
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: cannot take tasks",
				slog.String("actor", a.name), slog.Duration("retry_in", errDelay), slog.Any("error", err))
			if !a.sleep(timer, errDelay) {
				return
			}
			continue
		}
		errDelay = 0
		fault(pointFetched)
		a.dispatch(runs, fromIdle)
		if len(runs) == want {
			continue
		}
		a.mu.Lock()
		d := a.set.poll
		if !a.wakeAt.IsZero() {
			d = min(d, time.Until(a.wakeAt))
		}
		a.mu.Unlock()
		if !a.sleep(timer, d) {
			return
		}
	}
}

// sleep waits for d, a wake-up or the end; it reports false at the end.
func (a *Actor[T]) sleep(timer *time.Timer, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	defer timer.Stop()
	select {
	case <-a.wake:
		return true
	case <-timer.C:
		return true
	case <-a.stop:
		return false
	}
}

// reserve takes the idle workers the next fetch is for out of idle, and
// returns how many, and how many tasks to ask for: those, plus the workers
// an elastic actor may still start, up to Config.FetchBatch.
func (a *Actor[T]) reserve() (fromIdle, want int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fromIdle = min(a.idle, a.set.fetchBatch)
	a.idle -= fromIdle
	want = fromIdle + min(a.set.max-a.workers, a.set.fetchBatch-fromIdle)
	// A retry due by now is in this fetch's reach.
	if !a.wakeAt.IsZero() && !time.Now().Before(a.wakeAt) {
		a.wakeAt = time.Time{}
	}
	return fromIdle, want
}

// fetch takes up to want due tasks and records their leases.
func (a *Actor[T]) fetch(want int) ([]*run[T], error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	sent := time.Now()
	rows, err := a.pool.Query(ctx, a.q.fetch, a.name, want, a.owner, a.set.lease.Microseconds())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []*run[T]
	for rows.Next() {
		r := &run[T]{deadline: sent.Add(a.set.lease)}
		if err := rows.Scan(&r.id, &r.typ, &r.payload, &r.enqueued, &r.attempt, &r.runs, &r.lost, &r.canceled); err != nil {
			return nil, err
		}
		r.state = &taskState{pool: a.pool}
		r.ctx, r.cancel = context.WithCancelCause(context.WithValue(context.Background(), taskKey{}, r.state))
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		// The statement failed as a whole, so it took nothing.
		return nil, err
	}
	a.mu.Lock()
	for _, r := range runs {
		a.leases[r.id] = r
	}
	a.mu.Unlock()
	return runs, nil
}

// dispatch hands runs to the idle workers reserved for them, and starts
// workers for the rest; reserved workers left over go back to idle.
func (a *Actor[T]) dispatch(runs []*run[T], fromIdle int) {
	handed := min(len(runs), fromIdle)
	a.mu.Lock()
	a.idle += fromIdle - handed
	a.busy += len(runs)
	for _, r := range runs[handed:] {
		a.spawnLocked(r)
	}
	a.mu.Unlock()
	for _, r := range runs[:handed] {
		a.tasks <- r
	}
}
