package pgactor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

type job struct {
	N    int    `json:"n"`
	Note string `json:"note,omitempty"`
}

// TestSendComplete sends tasks and checks each runs once with its fields,
// then that the rows are gone and the counters add up.
func TestSendComplete(t *testing.T) {
	r := newRig(t)
	var got ledger[int]
	var mu = make(chan actor.Task[job], 100)
	a := start(r, "basic", func(ctx context.Context, task actor.Task[job]) error {
		got.add(task.Payload.N)
		mu <- task
		return nil
	}, Config[job]{Workers: 4})
	before := time.Now().Add(-time.Second)
	ids := make(map[uint64]int)
	for i := range 20 {
		id, err := a.Send(t.Context(), job{N: i})
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = i
	}
	eventually(t, 10*time.Second, "20 tasks run", func() bool { return got.count() == 20 })
	for range 20 {
		task := <-mu
		if n, ok := ids[task.ID]; !ok || n != task.Payload.N {
			t.Errorf("task %d carries %d, sent as %d (%v)", task.ID, task.Payload.N, n, ok)
		}
		if task.Attempt != 1 || task.Type != "pgactor.job" || task.Enqueued.Before(before) || task.Enqueued.After(time.Now()) {
			t.Errorf("task %+v: want attempt 1, type pgactor.job, enqueued about now", task)
		}
	}
	for i := range 20 {
		if got.times(i) != 1 {
			t.Errorf("payload %d ran %d times", i, got.times(i))
		}
	}
	eventually(t, 10*time.Second, "completions recorded", func() bool { return stats(t, a).Completed == 20 })
	s := stats(t, a)
	if s.Accepted != 20 || s.Queued+s.Running+s.Scheduled+s.Retrying != 0 {
		t.Errorf("stats %+v", s)
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`); n != 0 {
		t.Errorf("%d rows left in tasks", n)
	}
}

// TestSendErrors checks the errors of bad sends.
func TestSendErrors(t *testing.T) {
	r := newRig(t)
	a := start(r, "errors", nil, Config[chan int]{})
	_, err := a.Send(t.Context(), make(chan int))
	var ee *EncodeError
	if !errors.As(err, &ee) || ee.Actor != "errors" || ee.Type != "chan int" {
		t.Errorf("send of a channel: %v, want an *EncodeError naming the actor and chan int", err)
	}
	for _, tt := range []struct {
		opt  SendOption
		want string
	}{
		{After(-time.Second), "After: the delay must be ≥ 0"},
		{RunAt(time.Time{}), "RunAt: the time is zero"},
		{UniqueKey(""), "UniqueKey: the key is empty"},
		{WithType(""), "WithType: the name is empty"},
	} {
		b := start(r, "errors2", nil, Config[int]{})
		if _, err := b.Send(t.Context(), 1, tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("send: %v, want %q", err, tt.want)
		}
	}
	b := start(r, "errors3", nil, Config[int]{})
	if _, err := b.SendBatch(t.Context(), []int{1, 2}, UniqueKey("k")); err == nil || !strings.Contains(err.Error(), "UniqueKey would give every task") {
		t.Errorf("batch with a unique key: %v", err)
	}
	if _, err := b.SendTx(t.Context(), nil, 1); err == nil {
		t.Error("SendTx with a nil transaction succeeded")
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Send(t.Context(), 1); !errors.Is(err, actor.ErrClosed) {
		t.Errorf("send after Close: %v, want actor.ErrClosed", err)
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`); n != 0 {
		t.Errorf("refused sends left %d rows", n)
	}
}
