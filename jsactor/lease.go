package jsactor

import (
	"cmp"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A held task is one this process took from the run consumer: its message,
// what the message says, and the lease as far as this process can prove
// it.
type held struct {
	msg       jetstream.Msg
	rec       record
	delivered int // the server's delivery count of this copy, from 1
	attempt   int // charged attempts, this run included

	// proven is the end of the lease this process can prove, as a reading
	// of the actor's monotonic clock: Lease after the pull request or the
	// confirmed renewal that started it, less a margin.
	proven atomic.Int64
	timer  *time.Timer // cancels the handler when proven passes

	cancel context.CancelCauseFunc // ends the handler's context; nil until it runs
	trace  *attemptTrace           // the attempt's trace, which only its worker touches; nil without a Tracer
	state  atomic.Uint32           // heldRunning until settled or given back

	lostCounted atomic.Bool // the delivery before this one is counted as lost (countLost)
}

// The states of a held task: the first of the worker and Close to move it
// out of heldRunning settles it.
const (
	heldRunning   uint32 = iota
	heldSettled          // the worker settles it
	heldGivenBack        // Close gives it back
)

// claim moves h out of heldRunning to state, reporting whether this call
// did.
func (h *held) claim(state uint32) bool { return h.state.CompareAndSwap(heldRunning, state) }

// margin is how much of a lease the actor does not count on: a tenth,
// for the time between the server's clock and this process's.
func (a *Actor[T]) margin() time.Duration { return a.set.lease / 10 }

// hold registers a task fetched by the request sent at sent.
func (a *Actor[T]) hold(msg jetstream.Msg, sent time.Duration) (*held, error) {
	msg = a.wrapFetched(msg)
	rec, md, err := recordOf(msg)
	if err != nil {
		return nil, err
	}
	h := &held{msg: msg, rec: rec, delivered: int(md.NumDelivered)}
	h.attempt = rec.charged + h.delivered
	h.proven.Store(int64(sent + a.set.lease - a.margin()))
	a.mu.Lock()
	a.held[h] = struct{}{}
	a.mu.Unlock()
	return h, nil
}

// release forgets h: its task is settled.
func (a *Actor[T]) release(h *held) {
	if h.timer != nil {
		h.timer.Stop()
	}
	a.mu.Lock()
	delete(a.held, h)
	a.mu.Unlock()
}

// leaseHeld reports whether this process can still prove h's lease.
func (a *Actor[T]) leaseHeld(h *held) bool { return int64(a.now()) < h.proven.Load() }

// watch arms h's timer: the handler's context ends with ErrLeaseLost once
// the lease can no longer be proven.
func (a *Actor[T]) watch(h *held, cancel context.CancelCauseFunc) {
	h.cancel = cancel
	h.timer = time.AfterFunc(time.Duration(h.proven.Load())-a.now(), func() { a.expire(h) })
}

// expire cancels h's handler if its lease has passed; a renewal that
// raced the timer has re-armed it.
func (a *Actor[T]) expire(h *held) {
	if left := time.Duration(h.proven.Load()) - a.now(); left > 0 {
		h.timer.Reset(left)
		return
	}
	h.cancel(ErrLeaseLost)
}

// heartbeat renews the leases of the tasks this process holds, every
// Heartbeat.
func (a *Actor[T]) heartbeat() {
	defer a.bgWG.Done()
	tick := time.NewTicker(a.set.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-a.beatCtx.Done():
			return
		case <-tick.C:
			a.renewLeases()
		}
	}
}

// renewLeases renews the leases this process holds and can still prove:
// an in-progress acknowledgement for each, then a round trip that proves
// the server read them. See prove for what a renewal proves. A task whose
// worker acknowledged it after the list was made has nothing to renew and
// is left out; it does not make the others' renewal fail, which under a
// stream of short tasks would leave a long task's lease unrenewed at
// every heartbeat.
func (a *Actor[T]) renewLeases() {
	sent := a.now()
	a.mu.Lock()
	hs := make([]*held, 0, len(a.held))
	for h := range a.held {
		if h.proven.Load() > int64(sent) {
			hs = append(hs, h) // a lease once lost is never renewed
		}
	}
	a.mu.Unlock()
	var err error
	renewing := hs[:0]
	for _, h := range hs {
		if !a.renews(h) {
			continue
		}
		switch e := h.msg.InProgress(); {
		case e == nil:
			renewing = append(renewing, h)
		case !errors.Is(e, jetstream.ErrMsgAlreadyAckd):
			err = cmp.Or(err, e)
		}
	}
	if len(renewing) == 0 && err == nil {
		return
	}
	err = cmp.Or(err, a.nc.FlushTimeout(a.set.heartbeat))
	if err != nil {
		a.log.Warn("lease renewal not confirmed by the server; running tasks lose their leases unless a later one is", "tasks", len(hs), "error", err)
		return
	}
	a.prove(renewing, sent)
}

// prove extends the leases of hs after in-progress acknowledgements sent
// at sent were confirmed by a round trip that has just ended. The server
// restarted each lease's ack wait when it read the acknowledgement, after
// sent — if the lease was still its: an acknowledgement that reached the
// server after the lease ran out extends the next worker's delivery, not
// this one's. So a renewal counts only for a task whose proven lease had
// not ended when the round trip did; the server read the acknowledgement
// before that. A worker frozen past its lease can therefore not renew it
// when it thaws.
func (a *Actor[T]) prove(hs []*held, sent time.Duration) {
	confirmed := int64(a.now())
	until := int64(sent + a.set.lease - a.margin())
	for _, h := range hs {
		for {
			old := h.proven.Load()
			if confirmed >= old || until <= old || h.proven.CompareAndSwap(old, until) {
				break
			}
		}
	}
}
