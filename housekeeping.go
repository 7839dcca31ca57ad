package actorpool

// Housekeeping is what the keeper does on its own clock rather than on a
// message: every housekeepingPeriod it sweeps the slots, evicting idle
// objects (evictionCause), testing those due a test (testDue, test),
// dooming lent objects past their lifetime (expireLent), and logging
// leases held past LeakThreshold (suspectLeak).

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// housekeepingPeriod is how often the keeper sweeps the slots: often enough
// that idle time, lifetime, validation and leak thresholds are enforced
// within a quarter of themselves, and at least once a second so that the
// coarse clock stays fresh and the acquire count is folded.
func housekeepingPeriod(c Config) time.Duration {
	tick := time.Second
	for _, d := range []time.Duration{c.MaxIdleTime, c.MaxLifetime, c.ValidationInterval, c.LeakThreshold} {
		if d > 0 && d/4 < tick {
			tick = d / 4
		}
	}
	return max(tick, time.Millisecond)
}

// housekeep is the keeper's periodic sweep of the slots. It folds the
// acquire count, then looks at each slot: an idle object may be evicted or
// be due a test, an object in use may have outlived its lifetime or be held
// so long that its lease is a suspected leak.
func (k *keeper[T]) housekeep() {
	p := k.p
	p.fold()
	if k.closing {
		return
	}
	now := k.now.UnixNano()
	c := p.census()
	idle, kept := c.idle, k.alive-c.leaving
	for i := range p.slots {
		s := &p.slots[i]
		st := s.load()
		switch k.observe(s, st, now) {
		case kindIdle:
			if cause, ok := k.evictionCause(s, now, idle, kept); ok {
				if p.reserveIdle(s, st) {
					idle--
					kept--
					k.destroy(s.idx, cause)
				}
			} else if k.testDue(s, now) && p.reserveIdle(s, st) {
				k.test(s)
			}
		case kindInUse:
			k.expireLent(s, now)
			k.suspectLeak(s, st, now)
		}
	}
}

// observe returns the kind of a slot seen in state st, a parked object
// counting as idle, and starts the slot's clock (seenAt) when its kind or
// seq has changed since the last sweep: how long an object has been idle,
// or its lease held, is measured from there.
func (k *keeper[T]) observe(s *slot, st state, now int64) slotKind {
	kind := st.kind()
	if kind == kindInUse && k.p.isParked(s.idx, st.seq()) {
		kind = kindIdle
	}
	if kind == kindReserved {
		// Under test or being destroyed. A test does not reset the
		// object's idle clock, so its seen state is left as it was.
		return kind
	}
	if kind != s.seenKind || st.seq() != s.seenSeq {
		s.seenKind, s.seenSeq, s.seenAt = kind, st.seq(), now
	}
	return kind
}

// evictionCause decides whether an idle object is evicted, and why: it
// predates a Reload, it has outlived MaxLifetime, or it has been idle past
// MaxIdleTime while more than MinIdle objects are idle and more than
// MinObjects are kept (alive and not being destroyed).
func (k *keeper[T]) evictionCause(s *slot, now int64, idle, kept int) (destroyCause, bool) {
	cfg := &k.p.cfg
	switch {
	case s.gen != k.gen:
		return causeReload, true
	case s.expiresAt != 0 && now >= s.expiresAt:
		return causeLifetime, true
	case cfg.MaxIdleTime > 0 && now-s.seenAt >= int64(cfg.MaxIdleTime) && idle > cfg.MinIdle && kept > cfg.MinObjects:
		return causeIdle, true
	}
	return 0, false
}

// testDue reports whether an idle object has gone ValidationInterval
// without a test, counting from when it went idle or was last tested.
func (k *keeper[T]) testDue(s *slot, now int64) bool {
	return k.testable && now-max(s.seenAt, s.testedAt) >= int64(k.p.cfg.ValidationInterval)
}

// expireLent dooms an object lent out past its lifetime: its holder
// retires it when it gives it back.
func (k *keeper[T]) expireLent(s *slot, now int64) {
	if s.expiresAt != 0 && now >= s.expiresAt {
		s.doomed.CompareAndSwap(0, uint32(causeLifetime)+1)
	}
}

// suspectLeak logs, once per lease, a lease held past LeakThreshold.
func (k *keeper[T]) suspectLeak(s *slot, st state, now int64) {
	p := k.p
	threshold := p.cfg.LeakThreshold
	if threshold == 0 || now-s.seenAt < int64(threshold) || s.leakLogged == st.seq()+1 {
		return
	}
	s.leakLogged = st.seq() + 1
	p.stats.suspected.Add(1)
	args := []any{"slot", s.idx, "held_for", time.Duration(now - s.seenAt).Round(time.Millisecond)}
	if tr := s.trace.Load(); tr != nil {
		args = append(args, "acquired", formatTrace(tr))
	}
	p.log.Warn("actorpool: lease held past LeakThreshold; suspected leak", args...)
}

// test runs Factory.Test on a reserved slot's object on its own goroutine.
//
// The object is the test's until Test returns or TestTimeout passes,
// whichever comes first. At the deadline it is destroyed even if Test
// ignores its context (destroying it is what unblocks a test stuck in
// I/O), its slot and its place in MaxObjects are freed, and what Test
// returns later is ignored. Until Test returns, its goroutine is counted in
// p.testing, so that Close waits for it.
func (k *keeper[T]) test(s *slot) {
	p := k.p
	obj := p.objs[s.idx]
	ctx, cancel := context.WithTimeout(k.baseCtx, p.cfg.TestTimeout)
	// The keeper enforces the deadline itself, not through the context:
	// Close cancels the context, and a test that ignores it is still
	// bounded by TestTimeout.
	run := &testRun{}
	run.deadline, _ = ctx.Deadline()
	k.tests[s.idx] = run
	p.testing.Add(1)
	go func() {
		start := time.Now()
		err := p.testObj(ctx, obj)
		if o := p.cfg.Observer; o != nil {
			o.ObserveTest(time.Since(start), err)
		}
		p.stats.tests.Add(1)
		timedOut := err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		mine := run.claimed.CompareAndSwap(false, true)
		if t := run.timer.Load(); t != nil {
			t.Stop()
		}
		p.testing.Add(-1)
		if !mine {
			// The deadline came first: the object is destroyed, or being
			// destroyed, and its slot may hold another object by now.
			p.post(message{kind: msgTestEnded})
			return
		}
		if !p.post(message{kind: msgTested, idx: s.idx, err: err, timedOut: timedOut}) {
			p.destroyInline(s, causeClose)
		}
	}()
}

// A testRun is a test in flight. Its object goes to whichever claims the
// run first: Test returning, or the deadline, which the keeper enforces
// (expireTests) and, once Close has given up on the keeper, a timer
// (timeTestsAlone).
type testRun struct {
	deadline time.Time
	claimed  atomic.Bool
	timer    atomic.Pointer[time.Timer] // the deadline's once the keeper has stopped
}

// expireTests takes the objects of the tests past TestTimeout from them and
// destroys them. A test that returned first has its result on the way
// (tested).
func (k *keeper[T]) expireTests() {
	for idx, run := range k.tests {
		if k.now.Before(run.deadline) {
			continue
		}
		delete(k.tests, idx)
		if run.claimed.CompareAndSwap(false, true) {
			k.p.logTestOutlived(idx)
			k.destroy(idx, causeTestTimeout)
		}
	}
}

// testDeadline returns the earliest deadline that expireTests has yet to
// enforce, or the zero time if there is none.
func (k *keeper[T]) testDeadline() time.Time {
	var next time.Time
	for _, run := range k.tests {
		next = sooner(next, run.deadline)
	}
	return next
}

// timeTestsAlone gives the deadlines of the tests still running to timers,
// as the keeper stops for good because Close gave up: the objects of those
// that outlive TestTimeout are destroyed at the deadline all the same.
func (k *keeper[T]) timeTestsAlone() {
	p := k.p
	for idx, run := range k.tests {
		if run.claimed.Load() {
			continue // returned; its object is destroyed by what it reported
		}
		s := &p.slots[idx]
		t := time.AfterFunc(time.Until(run.deadline), func() {
			if run.claimed.CompareAndSwap(false, true) {
				p.logTestOutlived(idx)
				p.destroyInline(s, causeTestTimeout)
			}
		})
		run.timer.Store(t)
		if run.claimed.Load() {
			// Test returned meanwhile, perhaps before the timer was
			// there to stop.
			t.Stop()
		}
	}
}

// logTestOutlived logs that a test outlived TestTimeout, and that its
// object is being destroyed.
func (p *core) logTestOutlived(idx int32) {
	p.log.Warn("actorpool: test outlived TestTimeout; destroying the object", "slot", idx, "timeout", p.cfg.TestTimeout)
}

// tested takes back an object whose test returned within TestTimeout:
// retired if it failed or is no longer wanted, else put back in service.
func (k *keeper[T]) tested(m message) {
	p := k.p
	s := &p.slots[m.idx]
	delete(k.tests, m.idx)
	switch {
	case m.timedOut:
		p.log.Warn("actorpool: test timed out; destroying the object", "timeout", p.cfg.TestTimeout, "err", m.err)
		k.destroy(m.idx, causeTestTimeout)
	case m.err != nil && !(k.closing && errors.Is(m.err, context.Canceled)):
		// A Test that returns the cancellation Close gave its context
		// has not failed; Close destroys its object below.
		p.log.Warn("actorpool: test failed; destroying the object", "err", m.err)
		k.destroy(m.idx, causeTestFailed)
	case k.closing:
		k.destroy(m.idx, causeClose)
	case s.doomed.Load() != 0:
		cause, _ := s.doom()
		k.destroy(m.idx, cause)
	case s.expiresAt != 0 && k.now.UnixNano() >= s.expiresAt:
		k.destroy(m.idx, causeLifetime)
	default:
		s.testedAt = k.now.UnixNano()
		k.putInService(s)
	}
}
