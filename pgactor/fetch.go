package pgactor

import (
	"context"
	"time"
)

// A fetch takes due tasks — and tasks whose lease ran out — each with a
// lease to this instance, in a pump's round (store.fetch). The pump fetches
// for workers it has reserved first, so that every task fetched has a
// worker waiting for it: the workers whose completions the same round
// commits, idle workers, and, in an elastic actor, workers it may still
// start.

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

// hold makes the leases of the tasks a round fetched, sent at sent, this
// instance's: each runs out a Lease after sent unless renewed, and gives
// its handler a context of its own. A task this instance held already
// was taken again once that lease had run out: the older lease is lost,
// and its handler told so. A lease taken once Close has canceled the
// handlers starts canceled.
func (a *Actor[T]) hold(fetched []*lease, sent time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range fetched {
		l.deadline = sent.Add(a.set.lease)
		l.htx = &handlerTx{pool: a.pool, headers: l.headers}
		l.ctx, l.cancel = context.WithCancelCause(context.WithValue(context.Background(), taskKey{}, l.htx))
		if a.shut.phase() >= phaseCanceling {
			// Fetched by a round in flight when Close canceled the
			// handlers: this one is canceled as they were, and its task
			// given back.
			l.cancel(errClosing)
		}
		if old := a.leases[l.id]; old != nil {
			old.cancel(ErrLeaseLost)
		}
		a.leases[l.id] = l
	}
}

// dispatch hands fetched tasks to the idle workers reserved for them, and
// starts workers for the rest in the spare places reserved; reserved
// workers left over go back to idle.
func (a *Actor[T]) dispatch(fetched []*lease, fromIdle, spare int) {
	handed := min(len(fetched), fromIdle)
	a.mu.Lock()
	a.idle += fromIdle - handed
	a.pending -= spare
	a.busy += len(fetched)
	for _, l := range fetched[handed:] {
		a.spawnLocked(l)
	}
	a.mu.Unlock()
	for _, l := range fetched[:handed] {
		a.tasks <- l
	}
}
