package actor

import "time"

// A hand is a run of tasks at the front of an unbounded mailbox lent to one
// worker, which runs them one after another without taking the actor's
// mutex in between. While a queue is long, a worker that took the mutex for
// every task would contend for it with every sender; with a hand it takes
// it once a run. The tasks stay in the mailbox's chunk, read in place, and
// a run is at most half of what waits divided by Config's maximum of
// workers, so that no worker sits on tasks that the others could run.
//
// What the worker does without the mutex goes through one atomic word,
// worker.counts: the tasks of its hand it completed and has not yet added to
// the actor's counters, and those it has not yet started. Finishing a task
// and starting the next is a single compare-and-swap on that word, so a
// Stats snapshot, taken under the mutex, sees the task either running or
// completed, never both or neither. halt takes the unstarted tasks back with
// a compare-and-swap of its own, after which the worker can start no more.

const (
	handLeft = 1<<32 - 1 // worker.counts: tasks of the hand not yet started
	handDone = 1 << 32   // worker.counts: one task of the hand completed
)

// lendLocked lends w a hand and makes its first task w's current one, if the
// mailbox is unbounded, no retry is ready to go first, and w's share of the
// queue is two tasks or more. It reports whether it did.
func (a *Actor[T]) lendLocked(w *worker[T]) bool {
	if a.box.bounded || a.ready.n > 0 {
		return false
	}
	// Shared among as many workers as the actor may have, not as it has: an
	// elastic actor is about to grow when tasks wait, and the new workers
	// must find them in the mailbox, not in one worker's hand.
	share := a.box.len() / (2 * a.set.max)
	if share < 2 {
		return false
	}
	c, from, to := a.box.lend(share)
	w.hand, w.handEnd = c, to
	w.counts.Store(uint64(to - from - 1))
	w.env = &c.items[from]
	return true
}

// nextInHand counts w's current task as completed and starts the next of its
// hand, without the mutex. It reports false, having done neither, when none
// is left or halt took them.
func (w *worker[T]) nextInHand() bool {
	for {
		c := w.counts.Load()
		left := int(uint32(c))
		if left == 0 {
			return false
		}
		if w.counts.CompareAndSwap(c, c+handDone-1) {
			done := w.env
			w.env = &w.hand.items[w.handEnd-left]
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
	left := a.settleHandLocked(w)
	if left == 0 {
		a.dropHandLocked(w)
		return false
	}
	w.counts.Store(uint64(left - 1))
	w.env = &w.hand.items[w.handEnd-left]
	return true
}

// settleHandLocked adds the completions of w's hand to the actor's counters
// and returns how many of its tasks are not yet started.
func (a *Actor[T]) settleHandLocked(w *worker[T]) int {
	c := w.counts.Load()
	a.c.completed += c >> 32
	w.counts.Store(c & handLeft)
	return int(uint32(c))
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
}

// passHandLocked is for a worker that leaves before its hand is done, as
// when its handler called runtime.Goexit: it starts a worker that takes
// over the tasks not yet started, unless there are none.
func (a *Actor[T]) passHandLocked(w *worker[T]) {
	if w.hand == nil {
		return
	}
	left := a.settleHandLocked(w)
	if left > 0 {
		heir := a.spawnLocked()
		heir.hand, heir.handEnd = w.hand, w.handEnd
		heir.counts.Store(uint64(left))
		w.hand, w.handEnd = nil, 0
		w.counts.Store(0)
		return
	}
	a.dropHandLocked(w)
}

// takeHandsLocked takes the tasks not yet started out of every worker's
// hand, for halt to dead-letter, and records in each worker which task of
// its hand is its current one, for abandon. The workers start no more.
func (a *Actor[T]) takeHandsLocked() []envelope[T] {
	var envs []envelope[T]
	for w := range a.workers {
		if w.hand == nil {
			continue
		}
		for {
			c := w.counts.Load()
			if !w.counts.CompareAndSwap(c, c&^handLeft) {
				continue
			}
			left := int(uint32(c))
			w.handCur = w.handEnd - left - 1
			envs = append(envs, w.hand.items[w.handEnd-left:w.handEnd]...)
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
	for w := range a.workers {
		if w.hand == nil {
			continue
		}
		c := w.counts.Load()
		s.Completed += c >> 32
		left := int(uint32(c))
		s.Queued += left
		if left > 0 {
			if enq := w.hand.items[w.handEnd-left].enq; !ok || enq < oldest {
				oldest, ok = enq, true
			}
		}
	}
	return oldest, ok
}
