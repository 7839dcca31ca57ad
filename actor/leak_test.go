package actor

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// pkgDir is this package's directory, as it appears in stack traces.
var pkgDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}()

// actorGoroutines returns the stacks of the goroutines, other than the
// caller's, that are running code from this package's non-test files.
func actorGoroutines() []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	// runtime.Stack lists the calling goroutine first.
	for _, g := range strings.Split(string(buf), "\n\n")[1:] {
		for line := range strings.SplitSeq(g, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, pkgDir+"/") {
				continue
			}
			file, _, _ := strings.Cut(line, ":")
			if !strings.HasSuffix(file, "_test.go") {
				found = append(found, g)
				break
			}
		}
	}
	return found
}

// waitActorGoroutines waits up to limit for the goroutines of this package
// to end and returns those still there.
func waitActorGoroutines(limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		gs := actorGoroutines()
		if len(gs) == 0 || time.Now().After(deadline) {
			return gs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noLeaks fails t if, once t and its cleanups are done, a goroutine running
// this package's code is left after a bounded wait. Call it first, with the
// test's own t (outside any synctest bubble), so that its cleanup runs last.
func noLeaks(t *testing.T) {
	t.Helper()
	if gs := actorGoroutines(); len(gs) > 0 {
		t.Fatalf("%d goroutines of package actor were running before the test:\n\n%s", len(gs), strings.Join(gs, "\n\n"))
	}
	t.Cleanup(func() {
		if gs := waitActorGoroutines(10 * time.Second); len(gs) > 0 {
			t.Errorf("%d goroutines of package actor outlived the test:\n\n%s", len(gs), strings.Join(gs, "\n\n"))
		}
	})
}

// TestLeakCheckSeesWorkers proves that noLeaks can fail: it sees the workers
// of an actor that is not closed, and no longer sees them after Stop.
func TestLeakCheckSeesWorkers(t *testing.T) {
	noLeaks(t)
	a := newActor(t, "leaky", func(context.Context, Task[int]) error { return nil }, Config[int]{Workers: 3})
	if gs := actorGoroutines(); len(gs) != 3 {
		t.Fatalf("the leak check sees %d goroutines of a live actor with 3 workers, want 3", len(gs))
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if gs := waitActorGoroutines(10 * time.Second); len(gs) != 0 {
		t.Fatalf("after Stop the leak check still sees %d goroutines", len(gs))
	}
}
