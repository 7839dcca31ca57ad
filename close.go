package actorpool

import (
	"context"
	"fmt"
	"slices"
)

// Closing, in the order it happens. Close marks the pool closed and tells
// the keeper, which fails the waiters, cancels creates and tests and
// retires the idle objects (keeper.close); objects lent out are retired by
// their holders as they give them back, and objects made idle meanwhile are
// swept. Close then waits for the keeper, which returns once every object
// is destroyed and every test has returned (keeper.drained). If Close's
// context ends first, the keeper abandons what is still out: whoever brings
// it back destroys it and counts it off, and Close reports what is out.

// close is Close.
func (p *core) close(ctx context.Context) error {
	if p.closed.CompareAndSwap(false, true) {
		p.post(message{kind: msgClose})
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.post(message{kind: msgAbandon, err: ctx.Err()})
		<-p.done
	}
	p.asyncTakes.Wait()
	return p.closeError()
}

// close begins Close: no new waiters, waiters fail, creates and tests are
// canceled, idle objects are destroyed. Objects in use are destroyed as
// they come back, and the keeper returns when none is left.
func (k *keeper[T]) close() {
	p := k.p
	k.closing = true
	k.cancel()
	p.mu.Lock()
	p.qclosed = true
	for p.failLocked(ErrClosed) {
	}
	p.mu.Unlock()
	k.retireIdle(causeClose)
}

// sweep has the objects made idle after Close began destroyed: by the
// keeper, or here once it has stopped.
func (p *core) sweep() {
	if !p.post(message{kind: msgSweep}) {
		p.sweepInline()
	}
}

// sweepInline destroys idle and parked objects on the calling goroutine,
// once the keeper has stopped.
func (p *core) sweepInline() {
	for i := range p.slots {
		s := &p.slots[i]
		if p.reserveIdle(s, s.load()) {
			p.destroyInline(s, causeClose)
		}
	}
}

// drained reports whether Close is done: every object, lent ones included,
// has come back and been destroyed, every create has returned, and every
// test has returned, those past TestTimeout included. Until then the
// keeper runs, and Close waits for it.
func (k *keeper[T]) drained() bool {
	return k.closing && k.alive == 0 && k.p.testing.Load() == 0
}

// abandon stops the keeper before every object is back, because Close's
// context ended. What is still out is destroyed by whoever brings it back:
// the holder on Release or Destroy, the create or test goroutine when it
// returns, the goroutine of a destroy in flight, the test deadline, the
// leak cleanup. From here on p.total counts what is still out, and each of
// them counts its object off (cameBack), so that a later Close reports the
// truth at the time of its call.
//
// The messages after msgAbandon in its batch (rest) and those left in the
// inbox are what came back meanwhile; abandon disposes of them.
func (k *keeper[T]) abandon(ctxErr error, rest []message) {
	p := k.p
	if !k.closing {
		k.close()
	}
	p.abandonErr = ctxErr
	// p.total is k.alive now, as the keeper stores every change of it; no
	// one counts off before the inbox is closed.
	for _, m := range slices.Concat(rest, p.inbox.close()) {
		switch m.kind {
		case msgRetire:
			p.destroyInline(&p.slots[m.idx], m.cause)
		case msgCreated:
			obj, _ := m.obj.(T) // nil when a create of an interface type failed
			p.createdLate(obj, m.err)
		case msgTested:
			p.destroyInline(&p.slots[m.idx], causeClose)
		case msgDestroyed, msgHijacked:
			p.cameBack()
		case msgLeak:
			if s, ok := p.reclaim(leakNote{idx: m.idx, gen: m.gen}); ok {
				p.destroyInline(s, causeLeak)
			}
		}
	}
	// An object made idle after Close swept may have had its sweep
	// message in the inbox just closed.
	p.sweepInline()
	k.timeTestsAlone()
	p.fold()
}

// createdLate disposes of what a create brought back after the keeper
// stopped: Close gave up, so nothing may be kept.
func (p *Pool[T]) createdLate(obj T, err error) {
	if err == nil {
		p.stats.created.Add(1)
		p.destroyObj(obj)
		p.stats.destroyed[causeClose].Add(1)
	}
	p.cameBack()
}

// destroyInline destroys a reserved slot's object on the calling goroutine,
// for objects that come back after the keeper has stopped, and counts it
// off.
func (p *core) destroyInline(s *slot, cause destroyCause) {
	p.destroySlot(s)
	p.stats.destroyed[cause].Add(1)
	p.cameBack()
}

// cameBack counts off an object, or a create, that came back after the
// keeper abandoned it: what is left in p.total is what Close reports as
// still out.
func (p *core) cameBack() { p.total.Add(-1) }

// closeError reports what is still out when Close returns: nothing, unless
// the keeper gave up waiting, and then whatever has not come back since.
func (p *core) closeError() error {
	if p.abandonErr == nil {
		return nil
	}
	objs, tests := p.total.Load(), p.testing.Load()
	switch {
	case objs > 0 && tests > 0:
		return fmt.Errorf("actorpool: close: %w: %d objects still out (lent, being created, tested or destroyed) are destroyed when they come back, and %d Factory.Test calls have not returned", p.abandonErr, objs, tests)
	case objs > 0:
		return fmt.Errorf("actorpool: close: %w: %d objects still out (lent, being created, tested or destroyed) are destroyed when they come back", p.abandonErr, objs)
	case tests > 0:
		return fmt.Errorf("actorpool: close: %w: %d Factory.Test calls have not returned (their objects are destroyed)", p.abandonErr, tests)
	}
	return nil
}
