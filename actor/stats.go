package actor

import "time"

// Stats is a snapshot of an actor's counters and gauges, all taken at one
// instant, so that
//
//	Submitted = Completed + DeadLettered + Rejected + Queued + Retrying + Running + Blocked
//
// holds in every snapshot. Once Close or Stop has returned, Queued,
// Retrying, Running and Blocked are zero, so
//
//	Submitted = Completed + DeadLettered + Rejected
type Stats struct {
	// Counters since New.
	Submitted    uint64 // tasks offered by every send, accepted or not
	Rejected     uint64 // tasks a send refused with an error: never accepted, so not in DeadLettered
	Dropped      uint64 // tasks dropped by the overflow policy; included in DeadLettered
	Completed    uint64 // tasks whose handler succeeded
	Failed       uint64 // failed attempts: errors, timeouts, panics
	Panicked     uint64 // attempts whose handler panicked or called runtime.Goexit; included in Failed
	Retried      uint64 // retries scheduled
	DeadLettered uint64 // accepted tasks handed to the dead letters

	// Gauges.
	Queued   int // tasks waiting for a worker: in the mailbox (a worker's run of it included), or retries whose backoff has passed
	Retrying int // tasks waiting for their backoff
	Running  int // tasks in a handler
	Blocked  int // sends waiting for room in a full mailbox; their tasks are not yet accepted
	Workers  int // worker goroutines
	Busy     int // workers in a handler, counting handlers abandoned by Close
	Idle     int // workers waiting for a task
	// OldestQueued is how long the task that has waited longest for a
	// worker has waited; 0 when none waits. It is measured from the task's
	// Enqueued, or from when its retry's backoff passed, both read from the
	// actor's coarse clock, so it may overstate the wait by up to about a
	// millisecond.
	OldestQueued time.Duration
}

// Stats returns a snapshot of the actor's counters and gauges.
func (a *Actor[T]) Stats() Stats {
	a.mu.Lock()
	s := Stats{
		Submitted:    a.c.submitted,
		Rejected:     a.c.rejected,
		Dropped:      a.c.dropped,
		Completed:    a.c.completed,
		Failed:       a.c.failed,
		Panicked:     a.c.panicked,
		Retried:      a.c.retried,
		DeadLettered: a.c.deadLettered,
		Queued:       a.box.len() + a.ready.n,
		Retrying:     len(a.retries),
		Running:      a.inState[workerRunning],
		Blocked:      a.senders.n,
		Workers:      len(a.workers),
		Busy:         a.busyLocked(),
		Idle:         len(a.idle),
	}
	// The tasks in each queue entered it in order, so the oldest is at a
	// front.
	waiting := false
	var oldest time.Duration
	if e := a.box.front(); e != nil {
		waiting, oldest = true, e.enq
	}
	if e := a.ready.front(); e != nil && (!waiting || e.x.ready < oldest) {
		waiting, oldest = true, e.x.ready
	}
	if enq, ok := a.handStatsLocked(&s); ok && (!waiting || enq < oldest) {
		waiting, oldest = true, enq
	}
	a.mu.Unlock()
	if waiting {
		// Read after the lock, so as to be later than every reading
		// taken before.
		s.OldestQueued = a.clock.exact() - oldest
	}
	return s
}
