package actorpool

import (
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
