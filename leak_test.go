package actorpool

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

func TestLeakDetectedByGC(t *testing.T) {
	for _, trace := range []bool{false, true} {
		var logs logBuffer
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 1, TraceAcquires: trace, Logger: logs.logger()})
		leakOne(t, p)
		waitFor(t, "the leak to be found", func() bool {
			runtime.GC()
			return p.Stats().Leaks == 1
		})
		waitFor(t, "the leaked object's destroy", func() bool { return f.destroys.Load() == 1 })
		out := logs.String()
		if !strings.Contains(out, "LEAK-DETECTED") {
			t.Errorf("log does not say LEAK-DETECTED:\n%s", out)
		}
		if trace && !strings.Contains(out, "leakOne") {
			t.Errorf("log does not say where the lease was acquired:\n%s", out)
		}
		// The slot is free again: a take gets a new object.
		l := acquire(t, p)
		if l.Value().id != 2 {
			t.Errorf("after the leak got conn %d, want a new one", l.Value().id)
		}
		release(t, l)
		if s := p.Stats(); s.DestroyedBy.Leaked != 1 {
			t.Errorf("stats: %+v", s)
		}
	}
}

//go:noinline
func leakOne(t *testing.T, p *Pool[*conn]) {
	l := acquire(t, p)
	_ = l.Value()
}

// A lease given back is never reported as leaked, however often the
// garbage collector runs.
func TestNoFalseLeaks(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 2})
	for range 100 {
		l := acquire(t, p)
		release(t, l)
	}
	for range 5 {
		runtime.GC()
	}
	if n := p.Stats().Leaks; n != 0 {
		t.Errorf("%d leaks reported for leases that were given back", n)
	}
}

// A future of AcquireAsync dropped with its lease is a leak like any other,
// and with TraceAcquires its report says where AcquireAsync was called,
// whether the take found an object idle or waited for one.
func TestLeakOfAbandonedAsyncTakeSaysWhere(t *testing.T) {
	for _, waited := range []bool{false, true} {
		var logs logBuffer
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 1, TraceAcquires: true, Logger: logs.logger()})
		if !waited {
			release(t, acquire(t, p)) // an idle object for the fast path
		}
		var held Lease[*conn]
		if waited {
			held = acquire(t, p)
		}
		leakAsync(p)
		if waited {
			waitFor(t, "the async take to wait", func() bool { return p.Stats().Waiting == 1 })
			release(t, held)
		}
		waitFor(t, "the leak to be found", func() bool {
			runtime.GC()
			return p.Stats().Leaks == 1
		})
		waitFor(t, "the leaked object's destroy", func() bool { return f.destroys.Load() == 1 })
		if out := logs.String(); !strings.Contains(out, "leakAsync") {
			t.Errorf("waited=%v: leak report does not say where AcquireAsync was called:\n%s", waited, out)
		}
	}
}

//go:noinline
func leakAsync(p *Pool[*conn]) {
	_ = p.AcquireAsync(context.Background())
}
