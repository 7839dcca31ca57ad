package jsactor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

func TestSendRuns(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var mu sync.Mutex
	got := map[uint64]actor.Task[string]{}
	a, err := New(ctx, nc, "echo", func(ctx context.Context, task actor.Task[string]) error {
		mu.Lock()
		got[task.ID] = task
		mu.Unlock()
		return nil
	}, Config[string]{Workers: 4, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	ids := map[uint64]string{}
	for _, p := range []string{"a", "b", "c"} {
		id, err := a.Send(ctx, p, WithType("letter"))
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = p
	}
	eventually(t, 5*time.Second, "three tasks run", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	for id, p := range ids {
		task := got[id]
		if task.Payload != p || task.Type != "letter" || task.Attempt != 1 || task.Enqueued.IsZero() {
			t.Errorf("task %d = %+v, want payload %q, type letter, attempt 1", id, task, p)
		}
	}
	eventually(t, 5*time.Second, "stats count three completions", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 3 && s.Accepted == 3 && s.Running == 0 && s.Queued == 0
	})
}
