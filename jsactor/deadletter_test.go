package jsactor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

func TestReplayExactlyOnce(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var fix atomic.Bool
	var seen runs
	a, err := New(ctx, nc, "replay", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if !fix.Load() {
			return errors.New("broken")
		}
		return nil
	}, Config[string]{OnError: func(*actor.TaskError) {}, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	id, err := a.Send(ctx, "x", WithType("job"))
	if err != nil {
		t.Fatal(err)
	}
	var letters []DeadLetter[string]
	eventually(t, 10*time.Second, "a dead letter", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{})
		return err == nil && len(letters) == 1
	})
	fix.Store(true)
	// Two replays at once, then one more: one task.
	var wg sync.WaitGroup
	got := make([][]uint64, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { got[i], errs[i] = a.Replay(ctx, letters[0].ID) })
	}
	wg.Wait()
	var newID uint64
	for i := range 2 {
		switch {
		case errs[i] == nil && len(got[i]) == 1:
			if newID != 0 && got[i][0] != newID {
				t.Errorf("concurrent replays made tasks %d and %d", newID, got[i][0])
			}
			newID = got[i][0]
		case errors.Is(errs[i], ErrNoTask):
		default:
			t.Errorf("replay %d: %v, %v", i, got[i], errs[i])
		}
	}
	if newID == 0 || newID == id {
		t.Fatalf("replay made task %d, want a new ID other than %d", newID, id)
	}
	if _, err := a.Replay(ctx, letters[0].ID); !errors.Is(err, ErrNoTask) {
		t.Errorf("replay of a replayed dead letter: %v, want ErrNoTask", err)
	}
	eventually(t, 10*time.Second, "the replayed task completes", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 1 && s.Replayed == 1 && s.Accepted == 2 && s.DeadLetters == 0 && s.DeadLettered == 1
	})
	// Accepted 2 above counts every task stored: the first and one replay.
	r := seen.list()
	if len(r) != 2 || r[1].ID != newID || r[1].Attempt != 1 || r[1].Type != "job" {
		t.Errorf("runs = %+v, want the first attempt and one replay as task %d", r, newID)
	}
}

func TestDeleteDeadLetters(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New(ctx, nc, "delete", func(ctx context.Context, task actor.Task[string]) error {
		return errors.New("no")
	}, Config[string]{OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	for range 3 {
		if _, err := a.Send(ctx, "x"); err != nil {
			t.Fatal(err)
		}
	}
	var letters []DeadLetter[string]
	eventually(t, 10*time.Second, "three dead letters", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{})
		return err == nil && len(letters) == 3
	})
	page, err := a.DeadLetters(ctx, LetterFilter{AfterID: letters[0].ID, Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != letters[1].ID {
		t.Errorf("second page of one = %v, %v; want dead letter %d", page, err, letters[1].ID)
	}
	n, err := a.DeleteDeadLetters(ctx, letters[0].ID, letters[1].ID, 999999)
	if err != nil || n != 2 {
		t.Errorf("DeleteDeadLetters = %d, %v; want 2", n, err)
	}
	if _, err := a.DeadLetters(ctx, LetterFilter{Limit: -1}); err == nil {
		t.Error("Limit -1 accepted")
	}
}
