package actor

import "time"

// A hand is a run of tasks at the front of an unbounded mailbox lent to one
// worker, which runs them one after another without taking the actor's
// mutex in between. While a queue is long, a worker that took the mutex for
// every task would contend for it with every sender; with a hand it takes
// it once a run. The tasks stay in the mailbox's chunk, read in place, and
// a run is at most half of what waits divided by Config's maximum of
// workers, so that the other workers find tasks in the mailbox too.
//
// The tasks of a hand are not the holder's alone: a worker whose own hand
// is done, before it looks in the mailbox, whose tasks came later, steals
// the first half of the tasks not yet started of the hand whose next task
// is the oldest, as a hand of its own. So no task waits behind a slow one
// while another worker is free, and a worker never parks while a hand holds
// a task not yet started: it looks for one first, under the mutex, and only
// the mailbox, which is empty while a worker is parked, lends hands.
//
// What the worker does without the mutex goes through one atomic word,
// worker.counts: the tasks of its hand it completed and has not yet added to
// the actor's counters, the slot of its current task, and the next slot to
// start; its hand's tasks not yet started are the slots from next to
// handEnd. Finishing a task and starting the next is a single
// compare-and-swap on that word, so a Stats snapshot, taken under the mutex,
// sees the task either running or completed, never both or neither. A thief
// moves next past the tasks it steals, and halt past them all, each with a
// compare-and-swap of its own, after which the worker can start none of
// them.

const (
	handSlot     = 1<<16 - 1 // worker.counts & handSlot: the next slot of the hand to start
	handCurShift = 16        // worker.counts >> handCurShift & handSlot: the slot of the current task
	handDone     = 1 << 32   // worker.counts / handDone: tasks of the hand completed
)

// handWord returns worker.counts for done tasks completed, the current task
// in slot cur, and slot next the next to start.
func handWord(done uint64, cur, next int) uint64 {
	return done*handDone | uint64(cur)<<handCurShift | uint64(next)
}

// handNext returns the next slot to start of a worker.counts word.
func handNext(c uint64) int { return int(c & handSlot) }

// holdLocked makes slots [from, to) of c, which the caller has lent, w's
// hand, and the first of them w's current task.
func (a *Actor[T]) holdLocked(w *worker[T], c *chunk[envelope[T]], from, to int) {
	w.hand, w.handEnd = c, to
	w.counts.Store(handWord(0, from, from+1))
	w.env = &c.items[from]
	a.hands = append(a.hands, w)
}

// lendLocked lends w a hand and makes its first task w's current one, if the
// mailbox is unbounded, no retry is ready to go first, and w's share of the
// queue is two tasks or more. It reports whether it did.
func (a *Actor[T]) lendLocked(w *worker[T]) bool {
	if a.box.bounded || a.ready.n > 0 {
		return false
	}
	// Shared among as many workers as the actor may have, not as it has: an
	// elastic actor is about to grow when tasks wait, and the new workers
	// should find them in the mailbox rather than steal them. It leaves in
	// the mailbox more tasks than the actor may have workers, which
	// growLocked relies on.
	share := a.box.len() / (2 * a.set.max)
	if share < 2 {
		return false
	}
	c, from, to := a.box.lend(share)
	a.holdLocked(w, c, from, to)
	return true
}

// stealLocked makes w, which holds no hand, the holder of the first half of
// the tasks not yet started of the hand whose next task is the oldest,
// unless a retry is ready to go first or no hand has a task to start. It
// reports whether it did.
func (a *Actor[T]) stealLocked(w *worker[T]) bool {
	if len(a.hands) == 0 || a.ready.n > 0 {
		return false
	}
	for {
		var (
			from  *worker[T]
			c     uint64
			first uint64
		)
		for _, v := range a.hands {
			vc := v.counts.Load()
			if next := handNext(vc); next < v.handEnd {
				if id := v.hand.items[next].id; from == nil || id < first {
					from, c, first = v, vc, id
				}
			}
		}
		if from == nil {
			return false
		}
		next := handNext(c)
		k := (from.handEnd - next + 1) / 2
		// The holder may have started the next task meanwhile; then look
		// again.
		if from.counts.CompareAndSwap(c, c+uint64(k)) {
			from.hand.lent++
			a.holdLocked(w, from.hand, next, next+k)
			return true
		}
	}
}

// nextInHand counts w's current task as completed and starts the next of its
// hand, without the mutex. It reports false, having done neither, when none
// is left or others took them.
func (w *worker[T]) nextInHand() bool {
	for {
		c := w.counts.Load()
		next := handNext(c)
		if next >= w.handEnd {
			return false
		}
		if w.counts.CompareAndSwap(c, handWord(c/handDone+1, next, next+1)) {
			done := w.env
			w.env = &w.hand.items[next]
			if reply := done.reply(); reply != nil {
				reply <- nil
			}
			return true
		}
	}
}

// handLocked adds the completions of w's hand to the actor's counters and
// makes the next task of the hand w's current one, or, when none is left,
// gives the hand back. It reports whether w has a task.
func (a *Actor[T]) handLocked(w *worker[T]) bool {
	if w.hand == nil {
		return false
	}
	next := a.settleHandLocked(w)
	if next == w.handEnd {
		a.dropHandLocked(w)
		return false
	}
	w.counts.Store(handWord(0, next, next+1))
	w.env = &w.hand.items[next]
	return true
}

// settleHandLocked adds the completions of w's hand to the actor's counters
// and returns the next slot of the hand to start. Only w's goroutine calls
// it, or afterGoexit once w's handler has ended, so nothing but the thieves
// and halt, which hold the mutex too, changes the word meanwhile.
func (a *Actor[T]) settleHandLocked(w *worker[T]) int {
	c := w.counts.Load()
	a.c.completed += c / handDone
	w.counts.Store(c % handDone)
	return handNext(c)
}

// dropHandLocked gives w's hand back; its tasks have all been run or taken.
// w's current task, if it came from the hand, is copied out of it first, for
// whatever is left to say of that task once the mutex is released: the
// mailbox may reuse the slots.
func (a *Actor[T]) dropHandLocked(w *worker[T]) {
	if w.hand == nil {
		return
	}
	if w.env != nil && w.env != &w.cur {
		w.cur = *w.env
		w.env = &w.cur
	}
	w.hand.giveBack()
	w.hand, w.handEnd = nil, 0
	w.counts.Store(0)
	a.unholdLocked(w)
}

// unholdLocked removes w from the holders of hands.
func (a *Actor[T]) unholdLocked(w *worker[T]) {
	for i, v := range a.hands {
		if v == w {
			last := len(a.hands) - 1
			a.hands[i], a.hands[last] = a.hands[last], nil
			a.hands = a.hands[:last]
			return
		}
	}
}

// passHandLocked is for a worker that leaves before its hand is done, as
// when its handler called runtime.Goexit: it starts a worker that takes
// over the tasks not yet started, unless there are none.
func (a *Actor[T]) passHandLocked(w *worker[T]) {
	if w.hand == nil {
		return
	}
	if next := a.settleHandLocked(w); next < w.handEnd {
		heir := a.spawnLocked()
		heir.hand, heir.handEnd = w.hand, w.handEnd
		heir.counts.Store(handWord(0, next, next))
		w.hand, w.handEnd = nil, 0
		w.counts.Store(0)
		a.unholdLocked(w)
		a.hands = append(a.hands, heir)
		return
	}
	a.dropHandLocked(w)
}

// takeHandsLocked takes the tasks not yet started out of every worker's
// hand, for halt to dead-letter, and records in each worker which task of
// its hand is its current one, for abandon. The workers start no more.
func (a *Actor[T]) takeHandsLocked() []envelope[T] {
	var envs []envelope[T]
	for _, w := range a.hands {
		for {
			c := w.counts.Load()
			if !w.counts.CompareAndSwap(c, c&^handSlot|uint64(w.handEnd)) {
				continue
			}
			w.handCur = int(c >> handCurShift & handSlot)
			envs = append(envs, w.hand.items[handNext(c):w.handEnd]...)
			break
		}
	}
	return envs
}

// runningLocked returns w's current task as abandon sees it, after halt.
func (w *worker[T]) runningLocked() *envelope[T] {
	if w.hand != nil {
		return &w.hand.items[w.handCur]
	}
	return &w.cur
}

// handStatsLocked adds the hands' completions and unstarted tasks to s, and
// returns the reading of when the oldest unstarted task was queued, if any.
func (a *Actor[T]) handStatsLocked(s *Stats) (oldest time.Duration, ok bool) {
	for _, w := range a.hands {
		c := w.counts.Load()
		s.Completed += c / handDone
		next := handNext(c)
		s.Queued += w.handEnd - next
		if next < w.handEnd {
			if enq := w.hand.items[next].enq; !ok || enq < oldest {
				oldest, ok = enq, true
			}
		}
	}
	return oldest, ok
}
