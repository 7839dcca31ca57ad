package jsactor

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

func TestDelayedSend(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	started := make(chan time.Time, 2)
	var seen runs
	a, err := New(ctx, nc, "delay", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		started <- time.Now()
		return nil
	}, Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	sent := time.Now()
	id, err := a.Send(ctx, "later", After(400*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the task counts as scheduled", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Scheduled == 1 && s.Queued == 0
	})
	at := <-started
	if at.Sub(sent) < 400*time.Millisecond {
		t.Errorf("the delayed task started %v after its send, before its delay of 400ms", at.Sub(sent))
	}
	if r := seen.list()[0]; r.ID != id || r.Attempt != 1 || r.Payload != "later" {
		t.Errorf("run = %+v, want task %d, attempt 1", r, id)
	}
	if _, err := a.Send(ctx, "past", RunAt(time.Now().Add(-time.Hour))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Error("a task due in the past did not run")
	}
}

func TestUniqueKey(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	release := make(chan struct{})
	a, err := New(ctx, nc, "unique", func(ctx context.Context, task actor.Task[string]) error {
		<-release
		return nil
	}, Config[string]{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if _, err := a.Send(ctx, "a", UniqueKey("order-1")); err != nil {
		t.Fatal(err)
	}
	_, err = a.Send(ctx, "b", UniqueKey("order-1"))
	var dup *DuplicateError
	if !errors.Is(err, ErrDuplicate) || !errors.As(err, &dup) || dup.Key != "order-1" {
		t.Fatalf("second send with the key: %v, want a *DuplicateError for order-1", err)
	}
	// A delayed task holds its key too, and keys with any bytes work.
	odd := "a.b *>\n"
	if _, err := a.Send(ctx, "c", UniqueKey(odd), After(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "d", UniqueKey(odd)); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a ready send with the key of a delayed task: %v, want ErrDuplicate", err)
	}
	close(release)
	eventually(t, 5*time.Second, "the first task completes", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 1
	})
	if _, err := a.Send(ctx, "e", UniqueKey("order-1")); err != nil {
		t.Errorf("send with the key of a completed task: %v", err)
	}
}

func TestMsgIDStoresOnce(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[string](ctx, nc, "msgid", nil, Config[string]{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	id1, err1 := a.Send(ctx, "x", MsgID("order-7"))
	id2, err2 := a.Send(ctx, "x", MsgID("order-7"))
	if err1 != nil || err2 != nil || id1 != id2 {
		t.Fatalf("two sends with one MsgID = %d, %v and %d, %v; want the same task", id1, err1, id2, err2)
	}
	ids, err := a.SendBatch(ctx, []string{"p", "q", "r"}, MsgID("batch-1"))
	if err != nil || len(ids) != 3 {
		t.Fatal(ids, err)
	}
	again, err := a.SendBatch(ctx, []string{"p", "q", "r"}, MsgID("batch-1"))
	if err != nil || !slices.Equal(ids, again) {
		t.Errorf("the same batch again = %v, %v; want %v", again, err, ids)
	}
	eventually(t, 5*time.Second, "four tasks accepted, no more", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Accepted == 4 && s.Queued == 4
	})
}

func TestSendRefusals(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[chan int](ctx, nc, "refuse", nil, Config[chan int]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	var enc *EncodeError
	if _, err := a.Send(ctx, make(chan int)); !errors.As(err, &enc) || enc.Actor != "refuse" {
		t.Errorf("send of an unencodable payload: %v, want an *EncodeError", err)
	}
	if _, err := a.Send(ctx, nil, Priority(5)); !errors.Is(err, ErrPriority) {
		t.Errorf("send with Priority: %v, want ErrPriority", err)
	}
	if _, err := a.SendBatch(ctx, []chan int{nil, nil}, UniqueKey("k")); err == nil || !strings.Contains(err.Error(), "UniqueKey") {
		t.Errorf("batch with a unique key: %v, want an error naming UniqueKey", err)
	}
}

// TestSendBatchLarge sends a batch larger than the client's limit on
// publishes in flight.
func TestSendBatchLarge(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[int](ctx, nc, "large", nil, Config[int]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	ids, err := a.SendBatch(ctx, make([]int, 9000))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("IDs out of order at %d: %d after %d", i, ids[i], ids[i-1])
		}
	}
}

// TestFarFutureDue sends tasks due past 2262, when a due time's Unix
// nanoseconds overflow, and snoozes one for math.MaxInt64: each waits,
// rather than coming due at once.
func TestFarFutureDue(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "farfuture", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if task.Payload == "snooze" {
			return Snooze(math.MaxInt64)
		}
		return nil
	}, Config[string]{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	ran := func(p string) int {
		n := 0
		for _, r := range seen.list() {
			if r.Payload == p {
				n++
			}
		}
		return n
	}
	for _, o := range []SendOption{RunAt(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), After(math.MaxInt64)} {
		if _, err := a.Send(ctx, "far", o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Send(ctx, "snooze"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the snoozing task runs", func() bool { return ran("snooze") >= 1 })
	// The delayed consumer takes its tasks in the order they were stored,
	// and the one worker runs ready tasks in that order: once a marker
	// stored after them has run, the far tasks and the snoozed copy had
	// come due before it, had they come due at all.
	eventually(t, 10*time.Second, "the snoozed copy is stored", func() bool {
		tasks, _, err := a.Tasks(ctx, TaskFilter{States: []TaskState{TaskScheduled}})
		return err == nil && len(tasks) == 3
	})
	if _, err := a.Send(ctx, "marker", After(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the marker runs", func() bool { return ran("marker") == 1 })
	if ran("far") != 0 || ran("snooze") != 1 {
		t.Fatalf("far tasks ran %d times, the snoozed one %d; want 0 and 1", ran("far"), ran("snooze"))
	}
	tasks, _, err := a.Tasks(ctx, TaskFilter{})
	if err != nil || len(tasks) != 3 {
		t.Fatalf("Tasks = %+v, %v; want three waiting", tasks, err)
	}
	for _, ti := range tasks {
		if ti.State != TaskScheduled || ti.Due.Year() < 2262 {
			t.Errorf("task %d: %s, due %v; want scheduled, due in 2262 or later", ti.ID, ti.State, ti.Due)
		}
	}
}

// TestSendCanceled sends with a context already canceled: nothing is
// stored, as the error says.
func TestSendCanceled(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[int](ctx, nc, "canceled", nil, Config[int]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if id, err := a.Send(canceled, 1); !errors.Is(err, context.Canceled) || id != 0 {
		t.Errorf("Send = %d, %v; want 0 and context.Canceled", id, err)
	}
	ids, err := a.SendBatch(canceled, []int{1, 2, 3})
	if !errors.Is(err, context.Canceled) || len(ids) != 3 || slices.ContainsFunc(ids, func(id uint64) bool { return id != 0 }) {
		t.Errorf("SendBatch = %v, %v; want three zero IDs and context.Canceled", ids, err)
	}
	// A send after them on the same connection is stored after anything
	// they published: its ID, a stream sequence, is 1 when they stored
	// nothing.
	id, err := a.Send(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 {
		t.Errorf("the next send's ID is %d, want 1: the sends with a canceled context stored %d tasks", id, id-1)
	}
}

// rawCodec stores a []byte payload as it is.
type rawCodec struct{}

func (rawCodec) Encode(p []byte) ([]byte, error) { return p, nil }
func (rawCodec) Decode(b []byte) ([]byte, error) { return b, nil }

// TestPayloadNearMaxPayload sends the largest payload Send takes, to a
// handler that fails with a long error of control bytes, which quoting
// makes four times as long: its retry and its dead letter are stored, and
// the task ends. A payload too large for that is refused with an error
// that names the limit.
func TestPayloadNearMaxPayload(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	long := errors.New(strings.Repeat("\x01", maxErrorLen))
	a, err := New(ctx, nc, "nearmax", func(context.Context, actor.Task[[]byte]) error { return long }, Config[[]byte]{
		Codec: rawCodec{}, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond},
		OnError: func(*actor.TaskError) {}, FlushInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	size := int(nc.MaxPayload())
	var refused error
	for ; size > 0; size -= 64 {
		_, err := a.Send(ctx, make([]byte, size), WithType("big"))
		if err == nil {
			break
		}
		refused = err
	}
	t.Logf("largest payload taken: %d bytes of a max_payload of %d", size, nc.MaxPayload())
	eventually(t, 20*time.Second, "the task dead-lettered after two attempts", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.DeadLettered == 1 && s.Retried == 1 && s.Lost == 0
	})
	if !errors.Is(refused, nats.ErrMaxPayload) || !strings.Contains(refused.Error(), "max_payload") {
		t.Errorf("send of %d bytes: %v, want an error naming max_payload that wraps nats.ErrMaxPayload", size+64, refused)
	}
}

// TestUniqueKeyMsgIDAgain sends a task with a unique key and a MsgID
// twice: the second send, as the documentation of MsgID says, stores
// nothing and returns the first one's ID, rather than being refused for
// the key the first one holds. Another message ID with the key is still
// refused.
func TestUniqueKeyMsgIDAgain(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[string](ctx, nc, "keyagain", nil, Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	first, err := a.Send(ctx, "a", UniqueKey("order-1"), MsgID("send-1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.Send(ctx, "a", UniqueKey("order-1"), MsgID("send-1"))
	if err != nil || again != first {
		t.Errorf("the same send again = %d, %v; want %d, nil", again, err, first)
	}
	if _, err := a.Send(ctx, "b", UniqueKey("order-1"), MsgID("send-2")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("another send with the key: %v, want ErrDuplicate", err)
	}
	tasks, _, err := a.Tasks(ctx, TaskFilter{})
	if err != nil || len(tasks) != 1 || tasks[0].ID != first {
		t.Errorf("Tasks = %+v, %v; want task %d alone", tasks, err, first)
	}
}

// TestStoredBeforeUnanswered checks that the probe of a send refused for
// its unique key reports an answer that did not come as an error, not as
// "not stored before": Send would then call the send a duplicate of
// another task's, when it may have been its own repeat.
func TestStoredBeforeUnanswered(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New(ctx, nc, "probeunanswered", nil, Config[string]{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if _, err := a.Send(ctx, "x", UniqueKey("k"), MsgID("first")); err != nil {
		t.Fatal(err)
	}
	m := &nats.Msg{Subject: a.l.subject(placeReady, keyToken("k")), Data: []byte("x")}
	ack, err := storedBefore(ctx, a.js, m, "first")
	if err != nil || ack == nil {
		t.Fatalf("probe of a stored message ID: %v, %v; want its acknowledgement", ack, err)
	}
	if ack, err := storedBefore(ctx, a.js, m, "never-sent"); err != nil || ack != nil {
		t.Fatalf("probe of a message ID never sent: %v, %v; want nil, nil", ack, err)
	}
	gone := connect(t, nc.ConnectedUrl())
	js, err := jetstream.New(gone)
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	if ack, err := storedBefore(ctx, js, m, "first"); err == nil {
		t.Fatalf("probe on a closed connection: %v, nil; want an error", ack)
	}
}

// ackLosingJS stores each publish of a task to the ready subject, then
// loses the acknowledgement of the first lose of them, as a dropped
// connection or a server slower than a try's wait does.
type ackLosingJS struct {
	jetstream.JetStream
	mu   sync.Mutex
	lose int
}

func (j *ackLosingJS) PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := j.JetStream.PublishMsg(ctx, m, opts...)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err == nil && !ack.Duplicate && j.lose > 0 && strings.Contains(m.Subject, "."+placeReady+".") {
		j.lose--
		return nil, context.DeadlineExceeded
	}
	return ack, err
}

// TestSendAckLostCounted sends tasks whose first try is stored and its
// acknowledgement lost: Send's retry is answered as a duplicate of it,
// and the task is still counted as accepted, once — it was counted
// nowhere, and Accepted fell short of the tasks stored.
func TestSendAckLostCounted(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[string](ctx, nc, "acklostsend", nil, Config[string]{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	a.js = &ackLosingJS{JetStream: a.js, lose: 3} // before any send, which the flusher's reads of a.js follow
	if _, err := a.Send(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "keyed", UniqueKey("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "named", MsgID("order-9")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "named", MsgID("order-9")); err != nil { // a send again: stored before, counted then
		t.Fatal(err)
	}
	var s Stats
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if s, err = a.Stats(ctx); err == nil && s.Queued == 3 && s.Accepted == 3 {
			return
		}
	}
	t.Errorf("stats %+v, %v; want three tasks queued and accepted", s, err)
}

// slowFirstAckJS delays the acknowledgement of its first asynchronous
// publish, as a server slow to answer one does: a batch waiting for it
// sees its context end, with the others' acknowledgements come.
type slowFirstAckJS struct {
	jetstream.JetStream
	n atomic.Int32
}

func (j *slowFirstAckJS) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	f, err := j.JetStream.PublishMsgAsync(m, opts...)
	if err != nil || j.n.Add(1) != 1 {
		return f, err
	}
	slow := &slowFuture{PubAckFuture: f, ok: make(chan *jetstream.PubAck, 1)}
	go func() {
		ack := <-f.Ok()
		time.Sleep(time.Second)
		slow.ok <- ack
	}()
	return slow, nil
}

type slowFuture struct {
	jetstream.PubAckFuture
	ok chan *jetstream.PubAck
}

func (f *slowFuture) Ok() <-chan *jetstream.PubAck { return f.ok }

// TestSendBatchEndedAfterAcks sends a batch whose context ends while it
// waits for its first task's acknowledgement, the others' come: each of
// those tasks has its ID reported, and is counted as accepted. Either was
// chosen at random against the ended context, and a task stored and
// acknowledged was reported as not stored.
func TestSendBatchEndedAfterAcks(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New[int](ctx, nc, "batchlate", nil, Config[int]{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	a.js = &slowFirstAckJS{JetStream: a.js} // before any send, which the flusher's reads of a.js follow
	const n = 20
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	ids, err := a.SendBatch(short, make([]int, n))
	if !errors.Is(err, context.DeadlineExceeded) || len(ids) != n || slices.Contains(ids[1:], 0) {
		t.Errorf("SendBatch = %v, %v; want the ID of every task but the first, whose acknowledgement did not come in time", ids, err)
	}
	var s Stats
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if s, err = a.Stats(ctx); err == nil && s.Queued == n && s.Accepted >= n-1 {
			return
		}
	}
	t.Errorf("stats %+v, %v; want %d tasks queued, %d accepted at least", s, err, n, n-1)
}
