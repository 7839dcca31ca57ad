package jsactor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestMsgIDApartFromActorIDs sends tasks whose MsgIDs have the form of
// the message IDs the actor gives its own messages — a task's next copy,
// a replay of a dead letter — before those are stored: each is a task of
// its own, and neither the retry nor the replay it looks like is taken
// for its duplicate and lost.
func TestMsgIDApartFromActorIDs(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	sender, err := New[string](ctx, nc, "msgidcopy", nil, Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, sender)
	idA, err := sender.Send(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	idPerm, err := sender.Send(ctx, "perm")
	if err != nil {
		t.Fatal(err)
	}
	_, dead, _ := sender.Streams()
	for p, id := range map[string]string{"b": fmt.Sprintf("c-%d-1", idA), "e": "replay-" + dead + "-1"} {
		if _, err := sender.Send(ctx, p, MsgID(id)); err != nil {
			t.Fatal(err)
		}
	}
	var seen runs
	a, err := New(ctx, nc, "msgidcopy", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		switch {
		case task.Payload == "a" && task.Attempt == 1:
			return errors.New("not yet")
		case task.ID == idPerm: // not its replay
			return actor.Permanent(errors.New("no"))
		}
		return nil
	}, Config[string]{MaxAttempts: 2, Backoff: fastBackoff, FlushInterval: 20 * time.Millisecond, OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	var letters []DeadLetter[string]
	eventually(t, 10*time.Second, "a dead letter", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{})
		return err == nil && len(letters) == 1
	})
	if letters[0].ID != 1 {
		t.Fatalf("dead letter %+v, want ID 1", letters[0])
	}
	if _, err := a.Replay(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); seen.count() < 6 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	ran := map[string][]int{}
	for _, r := range seen.list() {
		ran[r.Payload] = append(ran[r.Payload], r.Attempt)
	}
	if fmt.Sprint(ran) != "map[a:[1 2] b:[1] e:[1] perm:[1 1]]" {
		t.Errorf("attempts run %v, want a retried, perm replayed, b and e once", ran)
	}
}

// TestMsgIDCarriedUnchanged sends with MsgIDs that a header does not
// carry as they are — blank, with outer spaces, with a line break: each
// is still its own ID, stored once however often it is sent, and not
// taken for the ID it would be cut to.
func TestMsgIDCarriedUnchanged(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[string](ctx, nc, "msgidtext", nil, Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	ids := map[string]uint64{}
	for _, id := range []string{"x", " x", "x ", "  ", "\t", "x\r\ny", "x y"} {
		first, err1 := a.Send(ctx, "p", MsgID(id))
		again, err2 := a.Send(ctx, "p", MsgID(id))
		if err1 != nil || err2 != nil || first != again {
			t.Errorf("two sends with MsgID %q = %d, %v and %d, %v; want the same task", id, first, err1, again, err2)
		}
		for other, seq := range ids {
			if seq == first {
				t.Errorf("MsgID %q stored as the task of MsgID %q", id, other)
			}
		}
		ids[id] = first
	}
}
