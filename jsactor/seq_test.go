package jsactor

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestSeqsOfNone passes the operations Seqs and IDs that no task or dead
// letter has — 0, which JetStream never gives, and math.MaxUint64 — and
// cursors past the last: each is left alone, or fails with ErrNoTask, as
// the documentation says, and a page past the end is empty.
func TestSeqsOfNone(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New(ctx, nc, "none", func(context.Context, actor.Task[int]) error { return actor.Permanent(errors.New("no")) },
		Config[int]{OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if _, err := a.Send(ctx, 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a dead letter", func() bool {
		ls, err := a.DeadLetters(ctx, LetterFilter{})
		return err == nil && len(ls) == 1
	})
	if _, err := a.Send(ctx, 2, After(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{0, math.MaxUint64} {
		if _, err := a.Replay(ctx, id); !errors.Is(err, ErrNoTask) {
			t.Errorf("Replay(%d) = %v, want ErrNoTask", id, err)
		}
		if n, err := a.DeleteDeadLetters(ctx, id); n != 0 || err != nil {
			t.Errorf("DeleteDeadLetters(%d) = %d, %v; want 0, nil", id, n, err)
		}
		if moved, err := a.RunNow(ctx, id); len(moved) != 0 || err != nil {
			t.Errorf("RunNow(%d) = %v, %v; want none, nil", id, moved, err)
		}
		if deleted, err := a.Delete(ctx, id); len(deleted) != 0 || err != nil {
			t.Errorf("Delete(%d) = %v, %v; want none, nil", id, deleted, err)
		}
	}
	if tasks, next, err := a.Tasks(ctx, TaskFilter{After: math.MaxUint64}); len(tasks) != 0 || next != 0 || err != nil {
		t.Errorf("Tasks after math.MaxUint64 = %d tasks, %d, %v; want none", len(tasks), next, err)
	}
	if ls, err := a.DeadLetters(ctx, LetterFilter{AfterID: math.MaxUint64}); len(ls) != 0 || err != nil {
		t.Errorf("DeadLetters after math.MaxUint64 = %d letters, %v; want none", len(ls), err)
	}
	if tasks, _, err := a.Tasks(ctx, TaskFilter{}); len(tasks) != 1 || err != nil {
		t.Errorf("Tasks = %+v, %v; want the delayed task, still there", tasks, err)
	}
}
