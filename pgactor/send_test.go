package pgactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgpool"
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
		{RunAt(time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC)), "later than PostgreSQL stores a time"},
		{RunAt(time.Date(-4713, 11, 23, 23, 59, 59, 999999000, time.UTC)), "earlier than PostgreSQL stores a time"},
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

// TestSendTx checks that a task sent in a transaction rolled back never
// runs, and one committed runs once.
func TestSendTx(t *testing.T) {
	r := newRig(t)
	var got ledger[string]
	a := start(r, "tx", record(&got), Config[string]{Workers: 2})
	ctx := t.Context()

	tx, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendTx(ctx, tx, "rolled back"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendBatchTx(ctx, tx, []string{"rolled back 2", "rolled back 3"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	tx, err = r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := a.SendTx(ctx, tx, "committed")
	if err != nil {
		t.Fatal(err)
	}
	// Not yet committed: invisible to the workers, whatever they do.
	time.Sleep(50 * time.Millisecond)
	if got.count() != 0 {
		t.Fatal("a task ran before its transaction committed")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the committed task ran", func() bool { return got.times("committed") == 1 })
	eventually(t, 10*time.Second, "completion recorded", func() bool { return stats(t, a).Completed == 1 })
	s := stats(t, a)
	if s.Accepted != 1 || got.count() != 1 || id == 0 {
		t.Errorf("after one rolled-back and one committed transaction: stats %+v, ran %d, id %d", s, got.count(), id)
	}
}

// TestSendInWith checks that a Send on the context of a pgpool.With
// callback joins the transaction open on its connection.
func TestSendInWith(t *testing.T) {
	r := newRig(t)
	var got ledger[string]
	a := start(r, "with", record(&got), Config[string]{})
	for _, commit := range []bool{false, true} {
		err := r.pool.With(t.Context(), func(ctx context.Context, conn *pgpool.Conn) error {
			if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
				return err
			}
			if _, err := a.Send(ctx, fmt.Sprint("commit=", commit)); err != nil {
				return err
			}
			if _, err := a.SendBatch(ctx, []string{fmt.Sprint("batch commit=", commit)}); err != nil {
				return err
			}
			end := "ROLLBACK"
			if commit {
				end = "COMMIT"
			}
			_, err := conn.Exec(ctx, end)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "the committed tasks ran", func() bool { return got.count() == 2 })
	eventually(t, 10*time.Second, "completions recorded", func() bool { return stats(t, a).Completed == 2 })
	if got.times("commit=true") != 1 || got.times("batch commit=true") != 1 || stats(t, a).Accepted != 2 {
		t.Errorf("ran %v, stats %+v", got.seen, stats(t, a))
	}
}

// TestSendBatch sends a batch and checks the IDs come back in the order
// of the payloads and every task runs once.
func TestSendBatch(t *testing.T) {
	r := newRig(t)
	var got ledger[int]
	byID := make(chan [2]uint64, 2000)
	a := start(r, "batch", func(ctx context.Context, task actor.Task[int]) error {
		got.add(task.Payload)
		byID <- [2]uint64{task.ID, uint64(task.Payload)}
		return nil
	}, Config[int]{Workers: 8})
	payloads := make([]int, 2000)
	for i := range payloads {
		payloads[i] = i
	}
	ids, err := a.SendBatch(t.Context(), payloads, WithType("numbers"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(payloads) {
		t.Fatalf("%d IDs for %d payloads", len(ids), len(payloads))
	}
	eventually(t, 30*time.Second, "every task ran", func() bool { return got.count() == len(payloads) })
	for range payloads {
		p := <-byID
		if ids[p[1]] != p[0] {
			t.Fatalf("payload %d ran as task %d, SendBatch said %d", p[1], p[0], ids[p[1]])
		}
	}
	for i := range payloads {
		if got.times(i) != 1 {
			t.Errorf("payload %d ran %d times", i, got.times(i))
		}
	}
	if empty, err := a.SendBatch(t.Context(), nil); err != nil || empty != nil {
		t.Errorf("empty batch: %v, %v", empty, err)
	}
}

// TestDelay checks that a task sent with After or RunAt waits, counted as
// scheduled, and starts no earlier than asked.
func TestDelay(t *testing.T) {
	r := newRig(t)
	started := make(chan time.Time, 2)
	a := start(r, "delay", func(ctx context.Context, task actor.Task[int]) error {
		started <- time.Now()
		return nil
	}, Config[int]{PollInterval: 50 * time.Millisecond})
	const delay = 400 * time.Millisecond
	sent := time.Now()
	id, err := a.Send(t.Context(), 1, After(delay))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), 2, RunAt(time.Now().Add(delay))); err != nil {
		t.Fatal(err)
	}
	// The row says when, by the server's clock.
	var wait time.Duration
	if err := r.pool.QueryRow(t.Context(), expand(r.schema, `SELECT (extract(epoch FROM available_at - enqueued_at) * 1e6)::bigint FROM {s}.tasks WHERE id = $1`), int64(id)).Scan(&wait); err != nil {
		t.Fatal(err)
	}
	if wait = wait * time.Microsecond; wait != delay {
		t.Errorf("After(%v) stored a wait of %v", delay, wait)
	}
	if s := stats(t, a); s.Scheduled != 2 || s.Queued != 0 {
		t.Errorf("just after sending: %+v, want 2 scheduled", s)
	}
	for range 2 {
		select {
		case at := <-started:
			// The server's clock and this one are the same machine's.
			if at.Sub(sent) < delay-10*time.Millisecond {
				t.Errorf("a task delayed %v started after %v", delay, at.Sub(sent))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a delayed task never ran")
		}
	}
}

// TestPriority checks the order tasks start in: priority, then when they
// became due, then ID.
func TestPriority(t *testing.T) {
	r := newRig(t)
	sender := start(r, "prio", nil, Config[int]{})
	want := []int{}
	for i, p := range []int16{0, 5, -3, 5, 0, 10} {
		if _, err := sender.Send(t.Context(), i, Priority(p)); err != nil {
			t.Fatal(err)
		}
	}
	want = []int{5, 1, 3, 0, 4, 2}
	var mu sync.Mutex
	var order []int
	start(r, "prio", func(ctx context.Context, task actor.Task[int]) error {
		mu.Lock()
		order = append(order, task.Payload)
		mu.Unlock()
		return nil
	}, Config[int]{Workers: 1, FetchBatch: 1})
	eventually(t, 10*time.Second, "all ran", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == len(want) })
	if !slices.Equal(order, want) {
		t.Errorf("ran in order %v, want %v", order, want)
	}
}

// TestUniqueKey checks that a second send with a live task's key is
// refused with that task's ID, and that the key is free once the task
// ends.
func TestUniqueKey(t *testing.T) {
	r := newRig(t)
	release := make(chan struct{})
	var got ledger[string]
	a := start(r, "unique", func(ctx context.Context, task actor.Task[string]) error {
		<-release
		got.add(task.Payload)
		return nil
	}, Config[string]{Workers: 2})
	first, err := a.Send(t.Context(), "first", UniqueKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Send(t.Context(), "second", UniqueKey("k"))
	var de *DuplicateError
	if !errors.As(err, &de) || !errors.Is(err, ErrDuplicate) || de.ID != first || de.Key != "k" || de.Actor != "unique" {
		t.Fatalf("second send with the key: %v, want a *DuplicateError naming task %d", err, first)
	}
	// Another key, and no key, are fine.
	if _, err := a.Send(t.Context(), "other", UniqueKey("k2")); err != nil {
		t.Fatal(err)
	}
	// Inside a transaction the refusal leaves the transaction usable.
	tx, err := r.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendTx(t.Context(), tx, "in tx", UniqueKey("k")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("send in a transaction with a taken key: %v", err)
	}
	if _, err := a.SendTx(t.Context(), tx, "in tx 2", UniqueKey("k3")); err != nil {
		t.Errorf("the transaction after a refused send: %v", err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	close(release)
	eventually(t, 10*time.Second, "the tasks ran", func() bool { return got.count() == 3 })
	eventually(t, 10*time.Second, "key free again", func() bool {
		_, err := a.Send(t.Context(), "again", UniqueKey("k"))
		return err == nil
	})
	if s := stats(t, a); s.Accepted != 4 {
		t.Errorf("accepted %d, want 4: refused sends are not accepted", s.Accepted)
	}
}

// emptyCodec encodes every payload as no bytes, as a nil slice — what
// protobuf's Marshal returns for a message with every field unset.
type emptyCodec struct{}

func (emptyCodec) Encode(struct{}) ([]byte, error) { return nil, nil }
func (emptyCodec) Decode(b []byte) (struct{}, error) {
	if len(b) != 0 {
		return struct{}{}, fmt.Errorf("want no bytes, got %q", b)
	}
	return struct{}{}, nil
}

// TestSendEmptyEncoding checks that a payload the codec encodes as a nil
// slice — no bytes, a valid encoding — is stored as an empty payload by
// every send and by Schedule, rather than refused by the NOT NULL of the
// payload column, and that its task runs.
func TestSendEmptyEncoding(t *testing.T) {
	r := newRig(t)
	ctx := t.Context()
	var ran ledger[uint64]
	a := start(r, "empty", func(ctx context.Context, task actor.Task[struct{}]) error {
		ran.add(task.ID)
		return nil
	}, Config[struct{}]{Codec: emptyCodec{}, Workers: 2, PollInterval: 20 * time.Millisecond})
	var want []uint64
	id, err := a.Send(ctx, struct{}{})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	want = append(want, id)
	id, err = a.Send(ctx, struct{}{}, UniqueFor("k", time.Hour))
	if err != nil {
		t.Fatalf("Send with UniqueFor: %v", err)
	}
	want = append(want, id)
	batch, err := a.SendBatch(ctx, []struct{}{{}, {}})
	if err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	want = append(want, batch...)
	if err := a.Schedule(ctx, "empty", "@hourly", struct{}{}); err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	eventually(t, 10*time.Second, "every task ran", func() bool { return ran.count() == len(want) })
	for _, id := range want {
		if ran.times(id) != 1 {
			t.Errorf("task %d ran %d times, want 1", id, ran.times(id))
		}
	}
}
