package actor

import (
	"context"
	"strings"
	"testing"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// noLeaks fails t if, once t and its cleanups are done, a goroutine started
// during t is left after a bounded wait: it is leakcheck.Check. Call it
// first, with the test's own t (outside any synctest bubble), so that its
// cleanup runs last.
func noLeaks(t *testing.T) {
	t.Helper()
	leakcheck.Check(t)
}

// TestLeakCheckSeesWorkers proves that the leak check can fail on an actor:
// it sees the workers of an actor that is not closed, and no longer sees
// them after Stop.
func TestLeakCheckSeesWorkers(t *testing.T) {
	noLeaks(t)
	before := leakcheck.Take()
	a := newActor(t, "leaky", func(context.Context, Task[int]) error { return nil }, Config[int]{Workers: 3})
	if gs := before.Started(); len(gs) != 3 {
		t.Fatalf("the leak check sees %d goroutines of a live actor with 3 workers, want 3:\n\n%s", len(gs), strings.Join(gs, "\n\n"))
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	before.Check(t)
}
