package pgactor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestDeadLetterReplay reads dead letters by page and filter, replays them
// from several goroutines at once — each letter moves once — and checks
// they run again and the counters, then deletes.
func TestDeadLetterReplay(t *testing.T) {
	r := newRig(t)
	var healed atomic.Bool
	var ran ledger[int]
	a := start(r, "letters", func(ctx context.Context, task actor.Task[int]) error {
		if !healed.Load() {
			return actor.Permanent(errors.New("broken"))
		}
		ran.add(task.Payload)
		return nil
	}, Config[int]{Workers: 4, PollInterval: 20 * time.Millisecond})
	const n = 30
	var ids []uint64
	for i := range n {
		typ := "even"
		if i%2 == 1 {
			typ = "odd"
		}
		id, err := a.Send(t.Context(), i, WithType(typ))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	eventually(t, 10*time.Second, "all dead-lettered", func() bool { return stats(t, a).DeadLetters == n })

	var paged []uint64
	for after := uint64(0); ; {
		page, err := a.DeadLetters(t.Context(), LetterFilter{AfterID: after, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, l := range page {
			paged = append(paged, l.Task.ID)
		}
		after = page[len(page)-1].Task.ID
	}
	if !slices.Equal(paged, ids) {
		t.Errorf("paged through %v, want %v", paged, ids)
	}
	odd, err := a.DeadLetters(t.Context(), LetterFilter{Type: "odd", Reason: ReasonPermanent})
	if err != nil || len(odd) != n/2 {
		t.Errorf("odd letters: %d, %v", len(odd), err)
	}
	if none, err := a.DeadLetters(t.Context(), LetterFilter{Reason: ReasonLost}); err != nil || len(none) != 0 {
		t.Errorf("lost letters: %d, %v", len(none), err)
	}

	healed.Store(true)
	var wg sync.WaitGroup
	var mu sync.Mutex
	moved := map[uint64]int{}
	for range 6 {
		wg.Go(func() {
			got, err := a.Replay(context.Background(), ids...)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, id := range got {
				moved[id]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if moved[id] != 1 {
			t.Errorf("letter %d moved %d times by 6 concurrent replays", id, moved[id])
		}
	}
	eventually(t, 10*time.Second, "replayed tasks ran", func() bool { return ran.count() == n })
	eventually(t, 10*time.Second, "and completed", func() bool { return stats(t, a).Completed == n })
	s := stats(t, a)
	if s.Accepted != 2*n || s.Replayed != n || s.DeadLettered != n || s.DeadLetters != 0 {
		t.Errorf("stats %+v", s)
	}
	if again, err := a.Replay(t.Context(), ids...); err != nil || len(again) != 0 {
		t.Errorf("replaying letters already replayed: %v, %v", again, err)
	}

	// Delete: a letter goes once.
	healed.Store(false)
	id, err := a.Send(t.Context(), -1)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "dead-lettered", func() bool { return stats(t, a).DeadLetters == 1 })
	if k, err := a.DeleteDeadLetters(t.Context(), id, id+1000); err != nil || k != 1 {
		t.Errorf("delete: %d, %v", k, err)
	}
	if k, err := a.DeleteDeadLetters(t.Context(), id); err != nil || k != 0 {
		t.Errorf("delete again: %d, %v", k, err)
	}
	if got, err := a.Replay(t.Context(), id); err != nil || len(got) != 0 {
		t.Errorf("replay of a deleted letter: %v, %v", got, err)
	}
}

// TestReplayUniqueKey checks that a letter whose unique key a live task
// holds stays a letter.
func TestReplayUniqueKey(t *testing.T) {
	r := newRig(t)
	var healed atomic.Bool
	block := make(chan struct{})
	a := start(r, "keyed", func(ctx context.Context, task actor.Task[int]) error {
		if !healed.Load() {
			return actor.Permanent(errors.New("broken"))
		}
		<-block
		return nil
	}, Config[int]{})
	dead, err := a.Send(t.Context(), 1, UniqueKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "dead-lettered", func() bool { return stats(t, a).DeadLetters == 1 })
	healed.Store(true)
	if _, err := a.Send(t.Context(), 2, UniqueKey("k")); err != nil {
		t.Fatalf("the key of a dead letter is free: %v", err)
	}
	if got, err := a.Replay(t.Context(), dead); err != nil || len(got) != 0 {
		t.Errorf("replay while a live task holds the key: %v, %v; want nothing moved", got, err)
	}
	if s := stats(t, a); s.DeadLetters != 1 {
		t.Errorf("stats %+v", s)
	}
	close(block)
}

// TestReplaySharedKey checks that a replay leaves out a letter whose
// unique key another letter of the same replay takes, or a send that
// commits while the replay runs, rather than failing, and moving none of
// its letters, with the server's unique violation.
func TestReplaySharedKey(t *testing.T) {
	r := newRig(t)
	ctx := t.Context()
	a := start(r, "sharedkey", nil, Config[int]{})
	letter := func(p int, opts ...SendOption) uint64 {
		t.Helper()
		id, err := a.Send(ctx, p, append(opts, After(time.Hour))...)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := a.Cancel(ctx, id); err != nil || n != 1 {
			t.Fatalf("cancel %d: %d, %v", id, n, err)
		}
		return id
	}
	first, second, plain := letter(1, UniqueKey("k")), letter(2, UniqueKey("k")), letter(3)
	moved, err := a.Replay(ctx, first, second, plain)
	if err != nil || !slices.Equal(moved, []uint64{first, plain}) {
		t.Fatalf("replay of two letters with one key and one without: %v, %v; want %v", moved, err, []uint64{first, plain})
	}
	if s := stats(t, a); s.DeadLetters != 1 || s.Replayed != 2 {
		t.Errorf("stats %+v, want 2 replayed and 1 letter left", s)
	}

	// The key is free again; a send takes it in a transaction that commits
	// while the replay of the letter left waits for it.
	if _, err := a.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := a.SendTx(ctx, tx, 4, UniqueKey("k")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		moved []uint64
		err   error
	}
	done := make(chan result, 1)
	go func() {
		moved, err := a.Replay(context.Background(), second)
		done <- result{moved, err}
	}()
	eventually(t, 10*time.Second, "the replay did not wait for the send's key", func() bool {
		return r.lockWaits() > 0
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if res := within(t, done, 10*time.Second, "the replay did not return"); res.err != nil || len(res.moved) != 0 {
		t.Errorf("replay of a letter whose key a send took meanwhile: %v, %v; want nothing moved", res.moved, res.err)
	}
	if s := stats(t, a); s.DeadLetters != 1 {
		t.Errorf("stats %+v, want the letter left", s)
	}
}
