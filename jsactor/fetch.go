package jsactor

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// fetch pulls tasks from the run consumer for idle workers until Close:
// each pull request asks for as many as there are idle workers, so that
// no task waits in this process while its lease runs.
func (a *Actor[T]) fetch() {
	defer a.bgWG.Done()
	defer close(a.queue)
	pause := 50 * time.Millisecond
	for {
		select {
		case <-a.tokens:
		case <-a.stopCtx.Done():
			return
		}
		n := 1
	more:
		for n < a.set.fetchBatch {
			select {
			case <-a.tokens:
				n++
			default:
				break more
			}
		}
		sent := a.now()
		batch, err := a.run.Fetch(n, jetstream.FetchMaxWait(a.fetchWait()))
		got := 0
		if err == nil {
			for msg := range batch.Messages() {
				got++
				a.dispatch(msg, sent)
			}
			err = batch.Error()
		}
		for range n - got {
			a.tokens <- struct{}{}
		}
		if err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoMessages) {
			pause = 50 * time.Millisecond
			continue
		}
		if a.stopCtx.Err() != nil {
			return
		}
		a.log.Warn("fetching tasks failed; trying again", "error", err, "wait", pause)
		select {
		case <-a.stopCtx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, 2*time.Second)
	}
}

// fetchWait is how long a pull request waits on the server: FetchWait,
// at most a quarter of the Lease. A task's lease starts when the server
// delivers it, which this process knows only to be after it sent the
// request; a request that waited most of a lease would bring tasks whose
// leases it cannot prove.
func (a *Actor[T]) fetchWait() time.Duration { return min(a.set.fetchWait, a.set.lease/4) }

// dispatch hands a fetched task to an idle worker, or, once Close has
// begun, gives it back.
func (a *Actor[T]) dispatch(msg jetstream.Msg, sent time.Duration) {
	h, err := a.hold(msg, sent)
	if err != nil {
		a.log.Error("a fetched message has no metadata; leaving it to be delivered again", "subject", msg.Subject(), "error", err)
		a.tokens <- struct{}{}
		return
	}
	if a.stopCtx.Err() != nil {
		a.tokens <- struct{}{}
		if h.claim(heldGivenBack) {
			a.giveBack(h)
		}
		return
	}
	if a.now()-sent > a.set.lease/4 {
		a.renew(h)
	}
	a.queue <- h
}

// renew restarts the proof of a lease that its pull request no longer
// proves well: a request waits on the server until a task comes, and the
// task's lease starts then, not when the request was sent, so a task that
// came late in a long request would start with little of its lease
// proven. An in-progress acknowledgement confirmed by a round trip proves
// a full lease from when it was sent.
func (a *Actor[T]) renew(h *held) {
	sent := a.now()
	if h.msg.InProgress() != nil || a.nc.FlushTimeout(a.set.heartbeat) != nil {
		return // the heartbeat tries again; the lease stands as far as the request proves it
	}
	a.prove([]*held{h}, sent)
}
