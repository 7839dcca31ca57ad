package pgactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// The pump is one goroutine per actor instance that runs every statement
// touching many of the instance's leases: it takes new tasks, commits the
// completions of the workers, extends the leases, gives leases back. Each
// round sends what is due as one batch — one round trip, run by the
// server as one transaction, so one commit — and while a round runs the
// completions of the workers that finish meanwhile gather for the next
// (group commit). A worker waits until its completion has committed, and
// the same round takes the task it runs next. The commit, not the
// statements, is what bounds a queue in PostgreSQL; sharing it is how a
// round serves many workers.
//
// Being one goroutine, the pump's statements never wait on each other's
// row locks, so they cannot deadlock; the workers' own statements (a
// retry, a dead letter, a Tx handler's completion) each lock one row.

// maxGroup bounds how many completions and give-backs one round commits.
const maxGroup = 1000

// errRefused is a completion's outcome when its lease had passed to
// another worker.
var errRefused = errors.New("pgactor: lease passed to another worker")

// A settling is work for the pump from a worker: a completion to commit,
// or a lease to give back.
type settling[T any] struct {
	r        *lease
	giveBack bool
	reply    chan outcome[T] // a completion's outcome
}

// An outcome is what the pump tells a worker whose completion it ran: nil,
// errRefused or why it failed, and the worker's next task, if the round
// took one for it.
type outcome[T any] struct {
	err  error
	next *lease
}

// A round is what one batch does.
type round[T any] struct {
	done, back []*settling[T]
	heartbeat  bool
	fromIdle   int // idle workers reserved for the fetched tasks
	want       int // tasks to fetch; 0 for none
	spare      int // places held in pending for new workers
	wakes      int // the pump's count of wake-ups when it sent the round
}

// maxRounds is how many rounds the pump keeps in flight at once, each on
// a connection of its own. While one round's batch runs on the server, the
// next one gathers the completions that came meanwhile and fetches for the
// workers that became idle, so that the server works on both at once: a
// single round at a time leaves all but one of the server's cores idle
// and makes every worker wait for a whole round trip and commit before it
// gets its next task. The rounds never wait on each other's row locks:
// each completes and gives back tasks no other round names, the fetches
// skip locked rows, and the heartbeat, which names every lease, runs only
// in a round alone.
const maxRounds = 2

// A roundResult is what a round in flight reports to the pump.
type roundResult[T any] struct {
	rd      *round[T]
	err     error
	fetched int
}

// pump is the pump's goroutine.
func (a *Actor[T]) pump() {
	defer a.bgWG.Done()
	defer close(a.pumpExit)
	hb := time.NewTicker(a.set.heartbeat)
	defer hb.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var (
		done, back []*settling[T]
		ready      = true // the queue may hold due tasks: fetch
		heartbeat  bool
		stop       = a.stop
		paused     bool          // a round failed: wait for timer before the next
		backoff    time.Duration // how long, doubling while rounds fail
		inflight   int           // rounds running
		wakes      int           // wake-ups and polls so far, to tell those a round in flight missed
		results    = make(chan roundResult[T], maxRounds)
	)
	add := func(s *settling[T]) {
		if s.giveBack {
			back = append(back, s)
		} else {
			done = append(done, s)
		}
	}
	// settle takes in the outcome of a round that was in flight.
	settle := func(res roundResult[T]) {
		inflight--
		rd := res.rd
		if res.err != nil {
			d, b := a.failRound(rd, res.err, false)
			done, back = append(d, done...), append(b, back...)
			paused = true
			backoff = min(max(2*backoff, 50*time.Millisecond), a.set.poll)
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: round failed",
				slog.String("actor", a.name), slog.Duration("retry_in", backoff), slog.Any("error", res.err))
			timer.Reset(backoff)
			return
		}
		backoff = 0
		if rd.want == 0 || paused {
			return
		}
		if res.fetched < rd.want && rd.wakes == wakes {
			// The queue had no more due tasks, and nothing woke the pump
			// since the round was sent (a task committed after its fetch
			// began): wait for a notification, a local send, a retry of
			// this process falling due, or the next poll.
			ready = false
			a.mu.Lock()
			d := a.set.poll
			if !a.wakeAt.IsZero() {
				d = min(d, time.Until(a.wakeAt))
			}
			a.mu.Unlock()
			timer.Reset(max(d, 0))
		} else {
			ready = true
		}
	}
	launch := func(rd *round[T]) {
		inflight++
		go func() {
			fetched, err := a.runRound(rd)
			results <- roundResult[T]{rd: rd, err: err, fetched: fetched}
		}()
	}
	for {
		select {
		case <-stop:
			// No more fetches: the idle workers may leave, once the rounds
			// in flight have handed out what they fetched.
			for inflight > 0 {
				settle(<-results)
			}
			stop = nil
			close(a.tasks)
		case <-a.keeper:
			// The workers are done or abandoned, and no more work comes:
			// finish what came.
			for inflight > 0 {
				settle(<-results)
			}
			for len(a.done) > 0 || len(done)+len(back) > 0 {
			drain:
				for len(done)+len(back) < maxGroup {
					select {
					case s := <-a.done:
						add(s)
					default:
						break drain
					}
				}
				rd := round[T]{done: done, back: back}
				if _, err := a.runRound(&rd); err != nil {
					a.failRound(&rd, err, true)
				}
				done, back = nil, nil
			}
			return
		default:
		}
		fetch := stop != nil && ready && !paused
		beat := heartbeat && inflight == 0
		idle := len(done)+len(back) == 0 && !beat && !(fetch && a.hasRoom())
		if idle || paused || inflight == maxRounds {
			// Nothing to do, a round just failed, or as many rounds run
			// as may: wait for work, for a round to end, or for the time
			// to try again.
			select {
			case res := <-results:
				settle(res)
			case s := <-a.done:
				add(s)
			case <-hb.C:
				heartbeat = true
			case <-a.wake:
				ready = true
				wakes++
			case <-timer.C:
				ready, paused = true, false
				wakes++
			case <-a.free:
			case <-stop:
			case <-a.keeper:
			}
			continue
		}
	gather:
		for len(done)+len(back) < maxGroup {
			select {
			case s := <-a.done:
				add(s)
			default:
				break gather
			}
		}
		rd := &round[T]{done: done, back: back, heartbeat: beat, wakes: wakes}
		if stop != nil && (ready || len(done) > 0) {
			rd.fromIdle, rd.want, rd.spare = a.reserve(len(done))
		}
		done, back = nil, nil
		if beat {
			heartbeat = false
		}
		launch(rd)
	}
}

// hasRoom reports whether a worker could take a task now.
func (a *Actor[T]) hasRoom() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.idle > 0 || a.workers+a.pending < a.set.max
}

// reserve takes the idle workers the next fetch is for out of idle, and
// returns how many, how many tasks to ask for — one for each worker whose
// completion the round commits, those, and the workers an elastic actor
// may still start, up to Config.FetchBatch — and how many of those new
// workers it holds places for in pending, so that a round running at the
// same time does not count the same places.
func (a *Actor[T]) reserve(completing int) (fromIdle, want, spare int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fromIdle = min(a.idle, max(a.set.fetchBatch-completing, 0))
	a.idle -= fromIdle
	want = min(completing+fromIdle+max(a.set.max-a.workers-a.pending, 0), a.set.fetchBatch)
	spare = max(want-completing-fromIdle, 0)
	a.pending += spare
	// A retry due by now is in this fetch's reach.
	if !a.wakeAt.IsZero() && !time.Now().Before(a.wakeAt) {
		a.wakeAt = time.Time{}
	}
	return fromIdle, want, spare
}

// runRound sends rd's statements as one batch, and on success settles
// what they did: replies to the completing workers, hands out the fetched
// tasks, applies the heartbeat. It returns how many tasks it fetched.
func (a *Actor[T]) runRound(rd *round[T]) (int, error) {
	leases := func(group []*settling[T]) []*lease {
		ls := make([]*lease, len(group))
		for i, s := range group {
			ls[i] = s.r
		}
		return ls
	}
	b := &pgx.Batch{}
	deleted := make(map[int64]bool, len(rd.done))
	if len(rd.done) > 0 {
		a.store.complete(b, leases(rd.done), deleted)
	}
	if len(rd.back) > 0 {
		a.store.giveBack(b, leases(rd.back))
	}
	var beat []*lease
	held := make(map[int64]bool) // id → canceled
	if rd.heartbeat {
		settling := make(map[int64]bool, len(rd.done)+len(rd.back))
		for _, s := range rd.done {
			settling[s.r.id] = true
		}
		for _, s := range rd.back {
			settling[s.r.id] = true
		}
		a.mu.Lock()
		for id, l := range a.leases {
			if !settling[id] {
				beat = append(beat, l)
			}
		}
		a.mu.Unlock()
		if len(beat) > 0 {
			a.store.heartbeat(b, beat, a.set.lease, held)
		}
	}
	var fetched []*lease
	if rd.want > 0 {
		a.store.fetch(b, rd.want, a.set.lease, &fetched)
	}
	sent := time.Now()
	if b.Len() > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
		err := a.pool.SendBatch(ctx, b).Close()
		cancel()
		if err != nil {
			return 0, err
		}
	}
	// Committed.
	if rd.heartbeat {
		a.applyHeartbeat(sent, beat, held)
	}
	for _, s := range rd.back {
		a.forget(s.r)
	}
	a.mu.Lock()
	for _, r := range fetched {
		r.deadline = sent.Add(a.set.lease)
		r.htx = &handlerTx{pool: a.pool}
		r.ctx, r.cancel = context.WithCancelCause(context.WithValue(context.Background(), taskKey{}, r.htx))
		a.leases[r.id] = r
	}
	a.mu.Unlock()
	if len(fetched) > 0 {
		fault(pointFetched)
	}
	// The completing workers take the first tasks, then the reserved idle
	// workers, then new workers.
	next := fetched
	for _, s := range rd.done {
		o := outcome[T]{}
		if !deleted[s.r.id] {
			o.err = errRefused
		}
		if len(next) > 0 {
			o.next, next = next[0], next[1:]
		}
		s.reply <- o
	}
	a.dispatch(next, rd.fromIdle, rd.spare)
	return len(fetched), nil
}

// failRound settles a round whose batch failed, as a whole: completions
// are kept for the next round while their leases may still be this
// process's (all of them when final is false and none past), give-backs
// are kept, the reserved workers go back to idle, and the leases are
// checked against their deadlines. It returns the work to retry.
func (a *Actor[T]) failRound(rd *round[T], err error, final bool) (done, back []*settling[T]) {
	a.mu.Lock()
	a.idle += rd.fromIdle
	a.pending -= rd.spare
	now := time.Now()
	for _, s := range rd.done {
		if final || now.After(s.r.deadline) {
			s.reply <- outcome[T]{err: err}
		} else {
			done = append(done, s)
		}
	}
	a.mu.Unlock()
	if rd.heartbeat {
		a.applyHeartbeat(now, nil, nil)
	}
	if final {
		for _, s := range rd.back {
			a.forget(s.r)
		}
		if len(rd.back) > 0 {
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: could not give tasks back; they run again once their leases run out",
				slog.String("actor", a.name), slog.Int("tasks", len(rd.back)), slog.Any("error", err))
		}
		return nil, nil
	}
	return done, rd.back
}

// applyHeartbeat extends the leases the heartbeat found held and cancels,
// with ErrLeaseLost, the handlers of those it did not find, and with
// ErrCanceled those of tasks marked canceled. Then it cancels the
// handlers of leases not renewed in time — the server unreachable — as
// lost too. ids is nil after a failed heartbeat.
func (a *Actor[T]) applyHeartbeat(sent time.Time, beat []*lease, held map[int64]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range beat {
		if r := a.leases[l.id]; r != l {
			continue // settled meanwhile
		}
		canceled, ok := held[l.id]
		switch {
		case !ok:
			l.cancel(ErrLeaseLost)
		case canceled:
			l.deadline = sent.Add(a.set.lease)
			l.cancel(ErrCanceled)
		default:
			l.deadline = sent.Add(a.set.lease)
		}
	}
	for _, r := range a.leases {
		if sent.After(r.deadline) {
			r.cancel(ErrLeaseLost)
		}
	}
}

// dispatch hands runs to the idle workers reserved for them, and starts
// workers for the rest in the spare places reserved; reserved workers left
// over go back to idle.
func (a *Actor[T]) dispatch(runs []*lease, fromIdle, spare int) {
	handed := min(len(runs), fromIdle)
	a.mu.Lock()
	a.idle += fromIdle - handed
	a.pending -= spare
	a.busy += len(runs)
	for _, r := range runs[handed:] {
		a.spawnLocked(r)
	}
	a.mu.Unlock()
	for _, r := range runs[:handed] {
		a.tasks <- r
	}
}

// complete records r's success: in the handler's transaction if it began
// one, else in the pump's next round. It returns once the completion has
// committed, or has been refused or has failed, with the worker's next
// task if the round took one.
func (a *Actor[T]) complete(worker string, r *lease) *lease {
	if tx := r.htx.end(); tx != nil {
		a.completeTx(worker, r, tx)
		return nil
	}
	defer a.forget(r)
	a.mu.Lock()
	if a.keeperClosed {
		a.mu.Unlock()
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: handler returned after Close gave its task back; the task runs again",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id))
		return nil
	}
	s := &settling[T]{r: r, reply: make(chan outcome[T], 1)}
	a.done <- s // never blocks: it holds a place per worker
	a.mu.Unlock()
	o := <-s.reply
	switch {
	case errors.Is(o.err, errRefused):
		a.refused(worker, r, "complete")
	case o.err != nil:
		a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: could not record a completion; the task runs again once its lease runs out",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", r.id), slog.Any("error", o.err))
	}
	return o.next
}

// completeTx deletes r's row in the handler's transaction and commits it,
// so that the handler's writes and the completion happen together or not
// at all.
func (a *Actor[T]) completeTx(worker string, r *lease, tx pgx.Tx) {
	defer a.forget(r)
	ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
	defer cancel()
	n, err := a.store.completeOne(ctx, tx, r)
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

// giveBack has the pump release r's lease at once, without charging the
// attempt. After Close stopped the pump, giveBackAll releases it.
func (a *Actor[T]) giveBack(r *lease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keeperClosed || r.forgotten {
		return
	}
	a.done <- &settling[T]{r: r, giveBack: true}
}

// giveBackAll releases every lease this instance still holds, at Close
// once the pump has stopped.
func (a *Actor[T]) giveBackAll() error {
	a.mu.Lock()
	var held []*lease
	for _, r := range a.leases {
		r.forgotten = true
		r.cancel(errClosing)
		held = append(held, r)
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
	if err := a.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("pgactor: actor %q: give back %d tasks at Close (they run again once their leases run out): %w", a.name, len(held), err)
	}
	return nil
}
