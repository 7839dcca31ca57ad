package jsactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errAckLost stands for an acknowledgement lost after a task's copy or
// dead letter was stored: the connection dropped, the server restarted.
var errAckLost = errors.New("test: the acknowledgement of the original was lost")

// loseFirstAck makes the acknowledgement of the first original whose copy
// or dead letter a stores fail, once.
func loseFirstAck[T any](a *Actor[T]) {
	var lost atomic.Bool
	a.faults.Store(&faults{afterStore: func(uint64) error {
		if lost.CompareAndSwap(false, true) {
			return errAckLost
		}
		return nil
	}})
}

// drained waits until a's work stream holds nothing: every message,
// originals and copies, was acknowledged — the original whose
// acknowledgement was lost included, which stays stored until a later
// delivery of it is acknowledged.
func drained[T any](t *testing.T, ctx context.Context, a *Actor[T]) {
	t.Helper()
	eventually(t, 20*time.Second, "the work stream to drain", func() bool {
		info, err := a.stream.Info(ctx)
		return err == nil && info.State.Msgs == 0
	})
}

// closedStats closes a and returns its Stats, whose counters are exact
// once the only process that ran it has closed. The tests' FlushInterval
// is an hour, so that Close adds the counts at once.
func closedStats[T any](t *testing.T, ctx context.Context, a *Actor[T]) Stats {
	t.Helper()
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s, err := a.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A retry is stored as a copy of the task, then the original is
// acknowledged. When that acknowledgement is lost, the original is
// delivered again after its lease: it must be acknowledged as settled,
// not run again beside its retry, which would end the task twice.
func TestRetryCopyStoredAckLost(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "copyacklost", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if seen.count() == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}, Config[string]{Workers: 2, MaxAttempts: 3, Backoff: fastBackoff, Lease: minLease, FlushInterval: time.Hour,
		OnError: func(*actor.TaskError) {}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	loseFirstAck(a)
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	s := closedStats(t, ctx, a)
	r := seen.list()
	if len(r) != 2 || r[0].Attempt != 1 || r[1].Attempt != 2 || r[0].ID != id || r[1].ID != id {
		t.Errorf("runs = %+v, want attempts 1 and 2 of task %d, once each", r, id)
	}
	if s.Accepted != 1 || s.Completed != 1 || s.Retried != 1 || s.Failed != 1 || s.DeadLettered != 0 || s.Lost != 0 {
		t.Errorf("stats = %+v, want 1 accepted, failed, retried and completed; none lost or dead-lettered", s)
	}
}

// A dead letter is stored, then the original acknowledged. When that
// acknowledgement is lost, the original delivered again must not run: a
// run that succeeded would complete a dead-lettered task.
func TestDeadLetterStoredAckLost(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "deadacklost", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if seen.count() == 1 {
			return errors.New("the only attempt fails")
		}
		return nil
	}, Config[string]{Workers: 2, MaxAttempts: 1, Lease: minLease, FlushInterval: time.Hour,
		OnError: func(*actor.TaskError) {}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	loseFirstAck(a)
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	letters, err := a.DeadLetters(ctx, LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	s := closedStats(t, ctx, a)
	if n := seen.count(); n != 1 {
		t.Errorf("the handler ran %d times, want once", n)
	}
	if len(letters) != 1 || letters[0].Task.ID != id || letters[0].Reason != ReasonMaxAttempts {
		t.Errorf("dead letters = %+v, want one of task %d for max attempts", letters, id)
	}
	if s.Accepted != 1 || s.DeadLettered != 1 || s.Completed != 0 || s.Lost != 0 {
		t.Errorf("stats = %+v, want 1 accepted and dead-lettered, none completed or lost", s)
	}
}

// testLogger writes an actor's warnings through t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// A copy whose store outlasts the lease must not be followed by an
// acknowledgement of the original: the server accepts a late one even
// while the original runs again on another worker. Here the first run's
// renewals are lost and its copy's store waits until the original runs
// again; that run, once the copy is stored and has run, finds the copy
// and drops its own result. The task completes once.
func TestSlowCopyStoreRefenced(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	again := make(chan struct{})   // the original's second delivery runs
	copyRan := make(chan struct{}) // the copy runs
	a, err := New(ctx, nc, "slowcopy", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		switch seen.count() {
		case 1:
			return errors.New("first attempt fails")
		case 2:
			close(again)
			select {
			case <-copyRan:
			case <-ctx.Done():
			}
		case 3:
			close(copyRan)
		}
		return nil
	}, Config[string]{Workers: 2, MaxAttempts: 3, Backoff: fastBackoff, Lease: minLease, FlushInterval: time.Hour,
		OnError: func(*actor.TaskError) {}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var slow atomic.Bool
	a.faults.Store(&faults{
		beforeStore: func(uint64) {
			if slow.CompareAndSwap(false, true) {
				<-again
			}
		},
		renew: func(_ uint64, delivered int) bool { return delivered > 1 || !slow.Load() },
	})
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	s := closedStats(t, ctx, a)
	r := seen.list()
	if len(r) != 3 || r[0].Attempt != 1 || r[1].Attempt != 2 || r[2].Attempt != 2 || r[2].ID != id {
		t.Errorf("runs = %+v, want attempt 1, its lost rerun and the retry", r)
	}
	if s.Accepted != 1 || s.Completed != 1 || s.Retried != 1 || s.DeadLettered != 0 || s.Lost != 1 {
		t.Errorf("stats = %+v, want 1 accepted, retried, completed and lost; none dead-lettered", s)
	}
}

// A redelivered task asks the server whether an earlier delivery settled
// it before its result is recorded, and those round trips can outlast
// the lease. The worker must then not acknowledge the success it had
// checked its lease for before asking: the server accepts the late
// acknowledgement and removes the task while its next delivery runs it.
// Here the second delivery's question waits until the third delivery
// runs, its renewals lost meanwhile.
func TestSlowProbeLeaseLost(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	third := make(chan struct{})  // the third delivery runs
	finish := make(chan struct{}) // the third delivery may return
	a := firstRunLost(t, ctx, nc, "slowprobe", &seen, func(ctx context.Context, n int) {
		if n == 3 {
			close(third)
			select {
			case <-finish:
			case <-ctx.Done():
			}
		}
	})
	var probes atomic.Int32 // the second delivery's
	a.faults.Store(&faults{
		renew: func(_ uint64, delivered int) bool { return delivered > 2 },
		probe: func(_ uint64, delivered int) error {
			if delivered == 2 && probes.Add(1) == 2 { // before its result is recorded
				select {
				case <-third:
				case <-ctx.Done():
				}
			}
			return nil
		},
	})
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-third:
	case <-ctx.Done():
		t.Fatal("the task was not delivered a third time")
	}
	eventually(t, 10*time.Second, "the second delivery to be settled", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.held) == 1
	})
	info, err := a.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("the work stream holds %d messages while the third delivery runs, want 1: the second acknowledged the task after its lease", info.State.Msgs)
	}
	close(finish)
	drained(t, ctx, a)
	s := closedStats(t, ctx, a)
	r := seen.list()
	if len(r) != 3 || r[2].ID != id {
		t.Errorf("runs = %+v, want three of task %d", r, id)
	}
	wantCompletedLostTwice(t, s)
}

// firstRunLost starts an actor called name on nc whose handler records
// each run in seen and lets its first run lose its lease — the run waits
// for its context, which ends once the lease runs out, given a renew
// fault that drops the first delivery's renewals — and passes every
// other run, by its number, to then, if not nil, before succeeding.
func firstRunLost(t *testing.T, ctx context.Context, nc *nats.Conn, name string, seen *runs, then func(ctx context.Context, n int)) *Actor[string] {
	t.Helper()
	a, err := New(ctx, nc, name, func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		n := seen.count()
		if n == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		if then != nil {
			then(ctx, n)
		}
		return nil
	}, Config[string]{Workers: 3, MaxAttempts: 3, Backoff: fastBackoff, Lease: minLease, FlushInterval: time.Hour,
		OnError: func(*actor.TaskError) {}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// wantFirstAndThirdRun sends one task to a, an actor from firstRunLost,
// waits until it is done and closes a, and checks that the task ran as its
// first and third deliveries only (why says why not the second), and was
// completed with two deliveries lost: the first, and the second, left.
func wantFirstAndThirdRun(t *testing.T, ctx context.Context, a *Actor[string], seen *runs, why string) {
	t.Helper()
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	s := closedStats(t, ctx, a)
	if r := seen.list(); len(r) != 2 || r[1].ID != id || r[1].Attempt != 3 {
		t.Errorf("runs = %+v, want attempts 1 and 3 of task %d: %s", r, id, why)
	}
	wantCompletedLostTwice(t, s)
}

// wantCompletedLostTwice checks the stats of an actor that took one task
// and completed it after losing two deliveries of it.
func wantCompletedLostTwice(t *testing.T, s Stats) {
	t.Helper()
	if s.Accepted != 1 || s.Completed != 1 || s.Lost != 2 || s.DeadLettered != 0 {
		t.Errorf("stats = %+v, want 1 accepted and completed, 2 lost, none dead-lettered", s)
	}
}

// A redelivered task asks the server whether an earlier delivery settled
// it before it runs, and when those round trips outlast the lease the
// handler must not start: the task is another worker's by then, and the
// run would be cut short at once, its effects beside the other's. Here
// the second delivery's question lasts until the third delivery has run,
// its renewals lost meanwhile; only the first and third deliveries run.
func TestSlowProbeBeforeRun(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	third := make(chan struct{})
	a := firstRunLost(t, ctx, nc, "slowproberun", &seen, func(_ context.Context, n int) {
		if n == 2 {
			close(third)
		}
	})
	var probes atomic.Int32 // the second delivery's
	a.faults.Store(&faults{
		renew: func(_ uint64, delivered int) bool { return delivered > 2 },
		probe: func(_ uint64, delivered int) error {
			if delivered == 2 && probes.Add(1) == 1 { // before it runs
				select {
				case <-third:
				case <-ctx.Done():
				}
			}
			return nil
		},
	})
	wantFirstAndThirdRun(t, ctx, a, &seen, "the second delivery's lease ran out before it could run")
}

// A redelivered task whose question to the server about earlier
// deliveries goes unanswered is left to be delivered again, as a lost
// run, and the delivery after it charges both the delivery before it and
// itself as lost. Stats.Lost must count both, as TaskInfo.Lost and a dead
// letter's Lost do: here the first delivery is lost, the second's probe
// fails, and the third runs.
func TestUnansweredProbeCountsLost(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a := firstRunLost(t, ctx, nc, "probefails", &seen, nil)
	a.faults.Store(&faults{
		renew: func(_ uint64, delivered int) bool { return delivered > 1 },
		probe: func(_ uint64, delivered int) error {
			if delivered == 2 {
				return errors.New("test: the server is out of reach")
			}
			return nil
		},
	})
	wantFirstAndThirdRun(t, ctx, a, &seen, "the second delivery could not ask and was left")
}

// errAnswerLost stands for the server's answer to a store lost on its
// way, after the server stored the message.
var errAnswerLost = fmt.Errorf("test: the answer to the store was lost: %w", nats.ErrTimeout)

// A retry's copy and a dead letter are stored, and the server's answer
// to each store is lost: the store is made again and answered as a
// duplicate of the first, and the retry and the dead letter are counted.
// They were counted nowhere: the original, left unacknowledged, was
// delivered again, found its copy or dead letter stored and was
// acknowledged as settled, and Retried and DeadLettered fell short.
func TestStoreAnswerLostCounted(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "storeanswer", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return errors.New("fails")
	}, Config[string]{Workers: 2, MaxAttempts: 2, Backoff: fastBackoff, Lease: minLease, FlushInterval: time.Hour,
		OnError: func(*actor.TaskError) {}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	answered := map[string]bool{}
	a.faults.Store(&faults{storeAnswer: func(msgID string) error {
		mu.Lock()
		defer mu.Unlock()
		if !answered[msgID] { // the first answer of each store
			answered[msgID] = true
			return errAnswerLost
		}
		return nil
	}})
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	letters, err := a.DeadLetters(ctx, LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	s := closedStats(t, ctx, a)
	if r := seen.list(); len(r) != 2 || r[0].Attempt != 1 || r[1].Attempt != 2 {
		t.Errorf("runs = %+v, want attempts 1 and 2", r)
	}
	if len(letters) != 1 || letters[0].Task.ID != id {
		t.Errorf("dead letters = %+v, want one of task %d", letters, id)
	}
	if s.Accepted != 1 || s.Failed != 2 || s.Retried != 1 || s.DeadLettered != 1 || s.Lost != 0 || s.DeadLetters != 1 {
		t.Errorf("stats = %+v, want 1 accepted, 2 failed, 1 retried and dead-lettered, none lost", s)
	}
}

// lossyAck is a fetched message whose first acknowledgement, of every
// message one test fetches, goes unanswered: the server applies it and
// its answer is lost (applied), or it is lost on its way.
type lossyAck struct {
	jetstream.Msg
	nc      *nats.Conn
	applied bool
	lost    *atomic.Bool  // an acknowledgement was lost already
	wait    time.Duration // how long the lost one waits for its answer
}

func (m lossyAck) DoubleAck(ctx context.Context) error {
	if !m.lost.CompareAndSwap(false, true) {
		return m.Msg.DoubleAck(ctx)
	}
	if m.applied {
		// Sent by hand, so that the message does not know it was
		// acknowledged, as it does not when the answer is lost.
		if _, err := m.nc.RequestWithContext(ctx, m.Reply(), []byte("+ACK")); err != nil {
			return err
		}
	}
	time.Sleep(m.wait)
	return fmt.Errorf("test: the acknowledgement went unanswered: %w", nats.ErrTimeout)
}

// A task whose handler succeeded is acknowledged, and Completed counts it
// once the server confirms. An acknowledgement that goes unanswered is
// sent again while the lease holds: one the server applied is counted
// once its repetition is answered — not left out of Completed, which
// would break Accepted's identity for good — and one lost on its way does
// not leave the task to run again.
func TestAckUnansweredCounted(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(fmt.Sprintf("applied=%v", applied), func(t *testing.T) {
			nc := rig(t)
			ctx := ctxT(t)
			var seen runs
			// The default Lease, which outlasts the second try on a busy
			// machine.
			cfg := Config[string]{Workers: 2, FlushInterval: time.Hour, Logger: testLogger(t)}
			a, err := New(ctx, nc, "ackanswer", func(ctx context.Context, task actor.Task[string]) error {
				seen.add(task)
				return nil
			}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var lost atomic.Bool
			a.faults.Store(&faults{fetched: func(m jetstream.Msg) jetstream.Msg {
				return lossyAck{Msg: m, nc: nc, applied: applied, lost: &lost}
			}})
			id, err := a.Send(ctx, "x")
			if err != nil {
				t.Fatal(err)
			}
			drained(t, ctx, a) // so that no delivery of the task is left to run it again
			s := closedStats(t, ctx, a)
			if !lost.Load() {
				t.Fatal("no acknowledgement was lost: the test tested nothing")
			}
			if r := seen.list(); len(r) != 1 || r[0].ID != id {
				t.Errorf("runs = %+v, want one of task %d", r, id)
			}
			if s.Accepted != 1 || s.Completed != 1 || s.Lost != 0 || s.Queued+s.Running != 0 {
				t.Errorf("stats = %+v, want 1 accepted and completed, none lost, queued or running", s)
			}
		})
	}
}

// leaseEndingAck is a fetched message whose first acknowledgement is lost
// on its way as its lease is about to run out: it leaves the lease a
// little less than ack's pause between tries, and records any later
// acknowledgement sent once the lease can no longer be proven.
type leaseEndingAck struct {
	jetstream.Msg
	a    *Actor[string]
	lost *atomic.Bool // the first acknowledgement was lost
	late *atomic.Bool // one was sent past the lease
}

func (m *leaseEndingAck) DoubleAck(ctx context.Context) error {
	h := m.held()
	if h != nil && m.lost.CompareAndSwap(false, true) {
		h.proven.Store(int64(m.a.now() + 20*time.Millisecond))
		return fmt.Errorf("test: the acknowledgement was lost: %w", nats.ErrTimeout)
	}
	if h != nil && !m.a.leaseHeld(h) {
		m.late.Store(true)
		return fmt.Errorf("test: an acknowledgement past the lease, which the server would apply to the next delivery: %w", nats.ErrTimeout)
	}
	return m.Msg.DoubleAck(ctx)
}

// held returns the held task of m.
func (m *leaseEndingAck) held() *held {
	m.a.mu.Lock()
	defer m.a.mu.Unlock()
	for h := range m.a.held {
		if h.msg == jetstream.Msg(m) {
			return h
		}
	}
	return nil
}

// An acknowledgement that goes unanswered is sent again only while the
// lease holds when it leaves, not when the try before it failed: the
// server applies a late one to the task's next delivery, another
// worker's. The task whose acknowledgement was lost runs again once its
// lease runs out, its first run counted as lost.
func TestAckRetryLeaseLost(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "acklate", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return nil
	}, Config[string]{Workers: 1, Lease: 2 * time.Second, FlushInterval: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var lost, late atomic.Bool
	a.faults.Store(&faults{
		fetched: func(m jetstream.Msg) jetstream.Msg {
			return &leaseEndingAck{Msg: m, a: a, lost: &lost, late: &late}
		},
		// The first delivery's lease is not renewed, so that the test's
		// end of it holds.
		renew: func(_ uint64, delivered int) bool { return delivered > 1 },
	})
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	s := closedStats(t, ctx, a)
	if !lost.Load() {
		t.Fatal("no acknowledgement was lost: the test tested nothing")
	}
	if late.Load() {
		t.Error("an acknowledgement was sent again after the lease ran out")
	}
	if r := seen.list(); len(r) != 2 || r[0].ID != id || r[1].ID != id {
		t.Errorf("runs = %+v, want two of task %d", r, id)
	}
	if s.Accepted != 1 || s.Completed != 1 || s.Lost != 1 || s.Queued+s.Running != 0 {
		t.Errorf("stats = %+v, want 1 accepted, completed and lost, none queued or running", s)
	}
}

// A success whose acknowledgement is lost as Close drains the workers is
// acknowledged again: Close does not end the tries, and counts the task
// completed once the server confirms.
func TestAckUnansweredAtClose(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	started, release := make(chan struct{}), make(chan struct{})
	a, err := New(ctx, nc, "ackclose", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		close(started)
		<-release
		return nil
	}, Config[string]{Workers: 1, FlushInterval: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var lost atomic.Bool
	a.faults.Store(&faults{fetched: func(m jetstream.Msg) jetstream.Msg {
		return lossyAck{Msg: m, nc: nc, lost: &lost}
	}})
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	closed := make(chan error, 1)
	go func() { closed <- a.Close(ctx) }()
	eventually(t, 10*time.Second, "Close to begin", func() bool { return a.stopCtx.Err() != nil })
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !lost.Load() {
		t.Fatal("no acknowledgement was lost: the test tested nothing")
	}
	s, err := a.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := seen.list(); len(r) != 1 || r[0].ID != id {
		t.Errorf("runs = %+v, want one of task %d", r, id)
	}
	if s.Accepted != 1 || s.Completed != 1 || s.Lost != 0 || s.Queued+s.Running != 0 {
		t.Errorf("stats = %+v, want 1 accepted and completed, none lost, queued or running", s)
	}
}

// Heartbeats go on renewing the lease of a task whose acknowledgement
// waits for its answer: the in-progress acknowledgements of a message
// the server applied the acknowledgement of are ignored, and the next try
// is answered and counted once.
func TestAckRetriedAcrossHeartbeats(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "ackbeat", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return nil
	}, Config[string]{Workers: 1, Heartbeat: 50 * time.Millisecond, FlushInterval: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var lost atomic.Bool
	var renewed atomic.Int64 // renewals once the acknowledgement was sent
	a.faults.Store(&faults{
		fetched: func(m jetstream.Msg) jetstream.Msg {
			return lossyAck{Msg: m, nc: nc, applied: true, lost: &lost, wait: 500 * time.Millisecond}
		},
		renew: func(uint64, int) bool {
			if lost.Load() {
				renewed.Add(1)
			}
			return true
		},
	})
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	drained(t, ctx, a)
	s := closedStats(t, ctx, a)
	if !lost.Load() || renewed.Load() == 0 {
		t.Fatalf("acknowledgement lost %v, renewals while it waited %d: the test tested nothing", lost.Load(), renewed.Load())
	}
	if r := seen.list(); len(r) != 1 || r[0].ID != id {
		t.Errorf("runs = %+v, want one of task %d", r, id)
	}
	if s.Accepted != 1 || s.Completed != 1 || s.Lost != 0 || s.Queued+s.Running != 0 {
		t.Errorf("stats = %+v, want 1 accepted and completed, none lost, queued or running", s)
	}
}
