package actor

import (
	"context"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// A worker is one goroutine that runs tasks. name and wake are set once;
// timer, goexit, env, enq and enqAt belong to the worker's goroutine;
// counts is atomic (see hand.go); the rest is guarded by the actor's mutex,
// except that the worker reads cur, hand and handEnd without it, when no
// one else writes them.
type worker[T any] struct {
	name string // "<actor>/<n>"
	// wake is signalled once per park: true hands the worker a task in cur,
	// false asks it to look again (the actor is closing).
	wake  chan bool
	timer *time.Timer // keep-alive, made on first use

	state  workerState  // see workerstate.go
	cur    envelope[T]  // the task in hand, unless it is in a hand
	env    *envelope[T] // the current task: &cur, or a slot of hand
	goexit *PanicError  // set when the handler called runtime.Goexit

	// A run of the mailbox lent to the worker (see hand.go): the slots
	// [next, handEnd) of hand are its tasks not yet started, where next is
	// kept in counts. handCur is the slot of the current task, as halt
	// found it.
	hand    *chunk[envelope[T]]
	handEnd int
	handCur int
	counts  atomic.Uint64

	// The Enqueued of the last task w ran, by its clock reading: tasks
	// queued within a tick of the coarse clock share a reading, so most
	// tasks need no conversion.
	enq   time.Duration
	enqAt time.Time
}

// task returns the Task of w's current task.
func (w *worker[T]) task(a *Actor[T]) Task[T] {
	env := w.env
	if env.enq != w.enq || w.enqAt.IsZero() {
		w.enq, w.enqAt = env.enq, a.clock.at(env.enq)
	}
	return Task[T]{ID: env.id, Type: a.typeOf(env), Attempt: env.attempt(), Enqueued: w.enqAt, Payload: env.payload}
}

// spawnLocked starts a worker, which will look for a task once it gets the
// mutex.
func (a *Actor[T]) spawnLocked() *worker[T] {
	a.nextWorker++
	w := &worker[T]{name: a.name + "/" + strconv.Itoa(a.nextWorker), wake: make(chan bool, 1)}
	a.workers[w] = struct{}{}
	a.inState[workerStarting]++
	go a.work(w)
	return w
}

// growLocked starts a worker when tasks wait that no worker is on its way to
// take and the actor may grow. It need not count the tasks waiting in
// hands: a worker takes from the mailbox only when no hand has a task to
// start, and a hand leaves more tasks in the mailbox than the actor may
// have workers (see lendLocked), so while a hand has a task to start, the
// mailbox alone has more tasks than workers on their way.
func (a *Actor[T]) growLocked() {
	if len(a.workers) < a.set.max && a.box.len()+a.ready.n > a.inState[workerStarting] {
		a.spawnLocked()
	}
}

// handOffLocked gives env to the worker that parked last, if any, and
// returns it for the caller to wake once the mutex is released. A parked
// worker means nothing is queued, so this keeps the order of tasks. It is
// small enough to be inlined into every send, which then makes no call
// when no worker is parked.
func (a *Actor[T]) handOffLocked(env *envelope[T]) *worker[T] {
	if len(a.idle) == 0 {
		return nil
	}
	return a.handToParkedLocked(env)
}

// handToParkedLocked is handOffLocked when a worker is parked.
func (a *Actor[T]) handToParkedLocked(env *envelope[T]) *worker[T] {
	n := len(a.idle)
	w := a.idle[n-1]
	a.idle[n-1] = nil
	a.idle = a.idle[:n-1]
	w.cur = *env
	a.moveLocked(w, workerRunning)
	return w
}

// removeLocked accounts for w leaving.
func (a *Actor[T]) removeLocked(w *worker[T]) {
	a.moveLocked(w, workerGone)
	delete(a.workers, w)
	a.checkDrainedLocked()
}

// checkDrainedLocked moves a draining or halted actor to drained once it
// has no task and no worker left.
func (a *Actor[T]) checkDrainedLocked() {
	if (a.phase == phaseDraining || a.phase == phaseHalted) && len(a.workers) == 0 && a.box.len() == 0 && a.ready.n == 0 && len(a.retries) == 0 {
		a.enterLocked(phaseDrained)
		close(a.drained)
	}
}

// work is a worker's goroutine.
func (a *Actor[T]) work(w *worker[T]) {
	labels := pprof.Labels("actor", a.name, "worker", w.name)
	pprof.Do(a.ctx, labels, func(ctx context.Context) {
		returned := false
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				// A panic that got this far is a bug, maybe with the
				// mutex held: not a Goexit to recover from.
				panic(v)
			}
			a.afterGoexit(w)
		}()
		done := false
		for a.next(w, done) {
			done = a.run(ctx, w)
		}
		returned = true
	})
}

// next ends w's current task, as completed if done, and finds w its next
// one, parking while there is none. It reports false when w must leave.
func (a *Actor[T]) next(w *worker[T], done bool) bool {
	if done && w.hand != nil && w.nextInHand() {
		return true
	}
	a.mu.Lock()
	if w.state == workerAbandoned {
		a.leaveAbandonedLocked(w)
		a.mu.Unlock()
		if done {
			a.lateOutcome(w, nil)
		}
		return false
	}
	reply := a.endLocked(w)
	for {
		if s, ok := a.takeLocked(w); ok {
			a.moveLocked(w, workerRunning)
			a.mu.Unlock()
			answer(reply)
			if s != nil {
				s.done <- struct{}{}
			}
			return true
		}
		w.cur = envelope[T]{} // let the payload be collected while w waits
		if a.nothingLeftLocked() {
			idle := a.idle
			a.idle = nil
			a.removeLocked(w)
			a.mu.Unlock()
			for _, x := range idle {
				x.wake <- false
			}
			answer(reply)
			return false
		}
		a.idle = append(a.idle, w)
		timed := a.aboveMinLocked()
		a.mu.Unlock()
		answer(reply)
		reply = nil
		got, alive := a.park(w, timed)
		if !alive {
			return false
		}
		if got {
			w.env = &w.cur
			return true
		}
		a.mu.Lock()
	}
}

// endLocked ends w's current task, if it has one, and makes w idle. A task
// still running has completed: one that failed has been settled, retried
// or dead-lettered, by fail, which moved w on. It returns the channel of an
// Ask waiting for the completed task, to be answered once the mutex is
// released.
func (a *Actor[T]) endLocked(w *worker[T]) chan<- error {
	switch w.state {
	case workerStarting, workerFailed:
		a.moveLocked(w, workerIdle)
	case workerRunning:
		a.moveLocked(w, workerIdle)
		a.c.completed++
		return w.env.reply()
	}
	return nil
}

// leaveAbandonedLocked lets w go once its handler, whose task Close
// dead-lettered, has returned: the completions of its hand are counted, and
// what is left of the hand was taken by halt.
func (a *Actor[T]) leaveAbandonedLocked(w *worker[T]) {
	a.settleHandLocked(w)
	a.dropHandLocked(w)
	a.removeLocked(w)
}

// nothingLeftLocked reports whether a worker that found no task must leave:
// the actor stopped draining, or is closing with no retry pending, which
// could come back as a task. Workers parked while retries were pending must
// leave too; the worker that finds so wakes them.
func (a *Actor[T]) nothingLeftLocked() bool {
	return a.haltedLocked() || (a.closingLocked() && len(a.retries) == 0)
}

// aboveMinLocked reports whether the actor is elastic and has more workers
// than its minimum, so that a worker that parks may leave once it has
// idled for the keep-alive.
func (a *Actor[T]) aboveMinLocked() bool {
	return a.set.max > a.set.min && len(a.workers) > a.set.min
}

// answer tells an Ask waiting on reply, if any, that its task completed.
func answer(reply chan<- error) {
	if reply != nil {
		reply <- nil
	}
}

// takeLocked makes w's next task its current one, and reports whether there
// was one: the next of w's hand, the first of a hand stolen from another
// worker or lent by the mailbox, or else the task popLocked takes, whose
// sender it returns. After w's own hand, a retry that is ready goes first,
// then the tasks of the hands, which were queued before those left in the
// mailbox.
func (a *Actor[T]) takeLocked(w *worker[T]) (*sender[T], bool) {
	if a.handLocked(w) || a.stealLocked(w) || a.lendLocked(w) {
		return nil, true
	}
	s, ok := a.popLocked(&w.cur)
	if ok {
		w.env = &w.cur
	}
	return s, ok
}

// popLocked takes the next task into dst, and reports whether there was
// one: a retry whose backoff has passed, or else the front of the mailbox,
// whose freed room goes to the sender that has waited longest, which it
// returns for the caller to signal.
func (a *Actor[T]) popLocked(dst *envelope[T]) (*sender[T], bool) {
	if a.ready.n > 0 {
		a.ready.pop(dst)
		return nil, true
	}
	if a.box.len() == 0 {
		return nil, false
	}
	a.box.pop(dst)
	s := a.senders.popFront()
	if s != nil {
		s.env.enq = a.clock.now()
		a.box.push(&s.env)
		// The send's task now waits as one sent into room would, and no
		// send may come to start a worker for it: a full mailbox sends
		// every later one to wait here too.
		a.growLocked()
	}
	return s, true
}

// park waits for w to be woken. When timed, a worker idle for the
// keep-alive leaves, unless that would take the actor below its minimum;
// alive is false when it left.
func (a *Actor[T]) park(w *worker[T], timed bool) (got, alive bool) {
	if !timed {
		return <-w.wake, true
	}
	if w.timer == nil {
		w.timer = time.NewTimer(a.set.keepAlive)
	} else {
		w.timer.Reset(a.set.keepAlive)
	}
	select {
	case got := <-w.wake:
		w.timer.Stop()
		return got, true
	case <-w.timer.C:
	}
	a.mu.Lock()
	if i := slices.Index(a.idle, w); i >= 0 && len(a.workers) > a.set.min {
		a.idle = slices.Delete(a.idle, i, i+1)
		a.removeLocked(w)
		a.mu.Unlock()
		return false, false
	}
	a.mu.Unlock()
	// Either a sender popped w and is about to wake it, or w must stay to
	// keep the minimum.
	return <-w.wake, true
}

// afterGoexit runs as w's goroutine ends by runtime.Goexit, called by the
// handler, whose attempt it fails, or by a callback — Config.OnError, the
// sink, as t.FailNow does — after fail has settled the failure it was
// reporting. It starts a worker in w's place, even when a callback calls
// Goexit again while the handler's is failed.
func (a *Actor[T]) afterGoexit(w *worker[T]) {
	defer a.replace(w)
	if w.goexit != nil {
		a.fail(w, w.goexit)
	}
}

// replace lets w leave and starts a worker in its place, unless w has left
// already (a logger called Goexit after it did).
func (a *Actor[T]) replace(w *worker[T]) {
	a.mu.Lock()
	if w.state == workerGone {
		a.mu.Unlock()
		return
	}
	a.passHandLocked(w) // before w leaves, lest the actor seem drained
	a.removeLocked(w)
	if !a.haltedLocked() {
		if !a.closingLocked() && len(a.workers) < a.set.min {
			a.spawnLocked()
		} else {
			a.growLocked()
		}
	}
	a.mu.Unlock()
}
