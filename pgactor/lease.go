package pgactor

import (
	"context"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// A lease is this instance's hold on one task: from the fetch that took it
// to the statement that settles it — completes, retries or dead-letters
// the task, ending the lease, or gives the lease back — or until it is
// lost. The task's row names this instance as its owner, and the lease's
// fencing token; every statement on the lease names both (fence.go).
type lease struct {
	id       int64
	token    int32 // the fencing token: the task's runs when this lease took it
	typ      string
	payload  []byte
	enqueued time.Time
	attempt  int
	lost     int
	canceled bool   // canceled before this lease took it
	headers  []byte // the task's headers, a JSON object, or nil: a sender's tracer's, a schedule's
	// due is when the task became due for this run: its available_at
	// before the fetch took it — the send's due time, a retry's, when it
	// was given back, or, for a task whose lease ran out, when the
	// lost lease did.
	due time.Time

	ctx    context.Context // the handler's context, before its timeout
	cancel context.CancelCauseFunc
	htx    *handlerTx    // what Tx and Send find in ctx
	trace  *attemptTrace // the attempt's trace; nil without a Tracer

	// Guarded by the actor's mutex.
	deadline  time.Time // when the lease runs out, as far as this process knows
	forgotten bool      // no longer in the actor's leases
}

// taskOf returns the Task the handler of l's task sees.
func taskOf[T any](l *lease, payload T) actor.Task[T] {
	return actor.Task[T]{ID: uint64(l.id), Type: l.typ, Attempt: l.attempt, Enqueued: l.enqueued, Payload: payload}
}

// forget drops l from the leases this instance holds, once it is settled
// or lost: it runs no statement. A lease that a later one of the same
// task replaced (hold) leaves that one held.
func (a *Actor[T]) forget(l *lease) {
	a.mu.Lock()
	if !l.forgotten {
		l.forgotten = true
		if a.leases[l.id] == l {
			delete(a.leases, l.id)
		}
	}
	a.mu.Unlock()
}

// running returns how many leases this instance holds.
func (a *Actor[T]) running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.leases)
}

// cancelAll cancels the handler's context of every lease this instance
// holds.
func (a *Actor[T]) cancelAll(cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.leases {
		l.cancel(cause)
	}
}

// expireLeases cancels, with ErrLeaseLost, the handlers of the leases that
// ran out without a renewal, as far as this process knows, and returns how
// long until the earliest of the others runs out: the pump calls it then.
// A heartbeat that fails tells them too (applyHeartbeat), but one that
// hangs — a network that stops answering rather than refusing — does so
// only when its round gives up, a Lease after it was sent, while from the
// lease's end on another worker may run the task.
func (a *Actor[T]) expireLeases() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	next := a.set.lease // a lease taken from now on runs out no sooner, give or take its round
	for _, l := range a.leases {
		if now.After(l.deadline) {
			l.cancel(ErrLeaseLost)
			continue
		}
		next = min(next, l.deadline.Sub(now))
	}
	return next
}

// applyHeartbeat extends the leases the heartbeat found held and cancels,
// with ErrLeaseLost, the handlers of those it did not find, and with
// ErrCanceled those of tasks marked canceled. Then it cancels the
// handlers of leases not renewed in time — the server unreachable — as
// lost too. beat is nil after a failed heartbeat.
func (a *Actor[T]) applyHeartbeat(sent time.Time, beat []*lease, held map[int64]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range beat {
		if a.leases[l.id] != l {
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
	for _, l := range a.leases {
		if sent.After(l.deadline) {
			l.cancel(ErrLeaseLost)
		}
	}
}
