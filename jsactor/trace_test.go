package jsactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/internal/tracerec"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// traceLog records what an actor tells its Tracer.
type traceLog = tracerec.Recorder[tasktrace.AttemptResult]

func newTraceLog(headers map[string]string) *traceLog {
	return tracerec.New[tasktrace.AttemptResult](headers)
}

// storedTrace returns the tracer's headers of the message at seq of
// stream, and its type.
func storedTrace(t testing.TB, nc *nats.Conn, stream string, seq uint64) (map[string]string, string) {
	t.Helper()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(ctxT(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctxT(t), seq)
	if err != nil {
		t.Fatalf("message %d of %s: %v", seq, stream, err)
	}
	return flat(traceHeader(m.Header)), m.Header.Get(hdrType)
}

// flat returns h's first values, nil for none.
func flat(h nats.Header) map[string]string {
	if len(h) == 0 {
		return nil
	}
	m := map[string]string{}
	for k, v := range h {
		m[k] = v[0]
	}
	return m
}

// TestTraceHeaderNames checks which of a Tracer's headers a task carries,
// and that every copy of a task's record carries them.
func TestTraceHeaderNames(t *testing.T) {
	for _, c := range []struct {
		name string
		in   map[string]string
		want map[string]string
	}{
		{"none", nil, nil},
		{"W3C", map[string]string{"traceparent": "00-1-2-01", "tracestate": "a=b", "baggage": "user=ann"},
			map[string]string{"traceparent": "00-1-2-01", "tracestate": "a=b", "baggage": "user=ann"}},
		{"reserved, in any case", map[string]string{"Actorpool-Type": "forged", "actorpool-id": "9", "Nats-Msg-Id": "x", "NATS-Expected-Stream": "s", "b3": "1"},
			map[string]string{"b3": "1"}},
		{"only reserved", map[string]string{"Nats-Rollup": "all"}, nil},
		{"what a header cannot hold", map[string]string{"": "v", "a b": "v", "a:b": "v", "ok": "line\nbreak", "also": "a\rb", "fine": "x y"},
			map[string]string{"fine": "x y"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := fromTracer(c.in)
			if got := flat(h); !maps.Equal(got, c.want) {
				t.Errorf("fromTracer(%v) = %v, want %v", c.in, got, c.want)
			}
			// A send's message, read back, then copied twice.
			msg := nats.Header{}
			addTrace(msg, h)
			msg.Set(hdrType, "mail")
			rec := readRecord(msg, 5, time.Now())
			for range 2 {
				rec.gen++
				rec = readRecord(rec.header(), 0, time.Time{})
			}
			if got := flat(rec.trace); !maps.Equal(got, c.want) {
				t.Errorf("a copy of a copy carries %v, want %v", got, c.want)
			}
			if rec.id != 5 || rec.typ != "mail" || rec.gen != 2 {
				t.Errorf("a copy of a copy has id %d, type %q, generation %d; want 5, mail, 2", rec.id, rec.typ, rec.gen)
			}
		})
	}
}

// TestTraceOffAllocatesNothing checks that an actor without a Tracer
// spends no allocation on tracing a send or an attempt.
func TestTraceOffAllocatesNothing(t *testing.T) {
	a := &Actor[int]{name: "a", runCtx: context.Background()}
	h := &held{rec: record{id: 1}, delivered: 1, attempt: 1}
	msg := nats.Header{hdrType: {"mail"}, hdrID: {"1"}, hdrGen: {"2"}, "Nats-Msg-Id": {"c-1-2"}}
	var o sendOptions
	errFailed := errors.New("x")
	allocs := testing.AllocsPerRun(100, func() {
		if ctx, err := a.startAttempt("a/1", h); ctx != a.runCtx || err != nil {
			t.Fatal("the handler's context is not the actor's")
		}
		h.trace.failed(errFailed)
		h.trace.settled(tasktrace.OutcomeCompleted)
		h.trace.deadLettered(ReasonLost, errFailed)
		a.endTrace("a/1", h)
		if traceHeader(msg) != nil {
			t.Fatal("a message with jsactor's headers only has a tracer's")
		}
		addTrace(msg, o.trace)
	})
	if allocs != 0 {
		t.Errorf("an untraced send and attempt allocate %v times, want none", allocs)
	}
}

// TestTraceSend checks that every kind of send hands the Tracer what it
// sends, and stores the Tracer's headers with each task, less reserved
// ones; and that an actor without a Tracer stores none.
func TestTraceSend(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	want := map[string]string{"traceparent": "00-1-2-01", "baggage": "user=ann"}
	tr := newTraceLog(map[string]string{"traceparent": "00-1-2-01", "baggage": "user=ann", "Actorpool-Type": "forged", "Nats-Msg-Id": "forged"})
	traced, err := New(ctx, nc, "traced", nil, Config[int]{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, traced)
	plain, err := New(ctx, nc, "plain", nil, Config[int]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, plain)
	one := func(id uint64, err error) ([]uint64, error) { return []uint64{id}, err }
	runAt := time.Now().Add(time.Hour)

	for _, c := range []struct {
		name     string
		a        *Actor[int]
		send     func(a *Actor[int]) ([]uint64, error)
		info     tasktrace.SendInfo // Actor filled in
		typ      string             // the stored type header
		want     map[string]string
		untraced bool
	}{
		{"Send", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(ctx, 1)) },
			tasktrace.SendInfo{Type: "int", Count: 1}, "", want, false},
		{"WithType", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(ctx, 1, WithType("mail"))) },
			tasktrace.SendInfo{Type: "mail", Count: 1}, "mail", want, false},
		{"SendBatch", traced, func(a *Actor[int]) ([]uint64, error) { return a.SendBatch(ctx, []int{1, 2, 3}) },
			tasktrace.SendInfo{Type: "int", Count: 3, Batch: true}, "", want, false},
		{"RunAt", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(ctx, 1, RunAt(runAt))) },
			tasktrace.SendInfo{Type: "int", Count: 1, RunAt: runAt}, "", want, false},
		{"After", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(ctx, 1, After(time.Hour))) },
			tasktrace.SendInfo{Type: "int", Count: 1, After: time.Hour}, "", want, false},
		{"no tracer", plain, func(a *Actor[int]) ([]uint64, error) { return a.SendBatch(ctx, []int{1, 2}) },
			tasktrace.SendInfo{}, "", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(tr.Sends())
			ids, err := c.send(c.a)
			if err != nil {
				t.Fatal(err)
			}
			work, _, _ := c.a.Streams()
			for _, id := range ids {
				got, typ := storedTrace(t, nc, work, id)
				if !maps.Equal(got, c.want) || typ != c.typ {
					t.Errorf("task %d stored headers %v and type %q, want %v and %q", id, got, typ, c.want, c.typ)
				}
			}
			sends := tr.Sends()[before:]
			if c.untraced {
				if len(sends) != 0 {
					t.Errorf("the tracer of another actor saw %d sends", len(sends))
				}
				return
			}
			info := c.info
			info.Actor = "traced"
			if len(sends) != 1 || sends[0].Info != info || sends[0].Err != nil || !slices.Equal(sends[0].IDs, ids) {
				t.Fatalf("the tracer saw %+v, want one send %+v with ids %v", sends, info, ids)
			}
		})
	}

	t.Run("a refused send ends with its error", func(t *testing.T) {
		if _, err := traced.Send(ctx, 1, UniqueKey("k")); err != nil {
			t.Fatal(err)
		}
		before := len(tr.Sends())
		_, err := traced.Send(ctx, 2, UniqueKey("k"))
		var dup *DuplicateError
		if !errors.As(err, &dup) {
			t.Fatalf("second send: %v, want a *DuplicateError", err)
		}
		sends := tr.Sends()[before:]
		if len(sends) != 1 || !errors.As(sends[0].Err, &dup) || sends[0].IDs != nil {
			t.Errorf("the tracer saw %+v, want the send to end with the *DuplicateError and no ids", sends)
		}
	})

	t.Run("a send on an ended context ends with its error", func(t *testing.T) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		for _, send := range []func() error{
			func() error { _, err := traced.Send(ended, 1); return err },
			func() error { _, err := traced.SendBatch(ended, []int{1, 2}); return err },
		} {
			before := len(tr.Sends())
			if err := send(); !errors.Is(err, context.Canceled) {
				t.Fatalf("send: %v, want context.Canceled", err)
			}
			sends := tr.Sends()[before:]
			if len(sends) != 1 || !errors.Is(sends[0].Err, context.Canceled) || sends[0].IDs != nil {
				t.Errorf("the tracer saw %+v, want the send to end with context.Canceled and no ids", sends)
			}
		}
	})
}

// TestTraceAttempts runs tasks to each end an attempt can have, on an
// actor of another connection than their sender's, and checks that each
// attempt gets the sender's headers back — through retries, a delayed
// send, snoozes — that the handler's context is the Tracer's, and what
// the Tracer learns of each attempt.
func TestTraceAttempts(t *testing.T) {
	srv := startServer(t)
	errBroken := errors.New("broken")
	type step struct {
		outcome tasktrace.Outcome
		reason  Reason
		err     bool // the result carries an error
		attempt int
	}
	for _, c := range []struct {
		name        string
		maxAttempts int
		opts        []SendOption
		wait        time.Duration // the first attempt's Due less its Enqueued, at least
		raw         bool          // the task's payload does not decode
		handle      func(ctx context.Context, attempt, run int) error
		want        []step
	}{
		{name: "completed", handle: func(context.Context, int, int) error { return nil },
			want: []step{{tasktrace.OutcomeCompleted, 0, false, 1}}},
		{name: "delayed", opts: []SendOption{After(50 * time.Millisecond)}, wait: 45 * time.Millisecond, handle: func(context.Context, int, int) error { return nil },
			want: []step{{tasktrace.OutcomeCompleted, 0, false, 1}}},
		{name: "retried then completed", maxAttempts: 2, handle: func(_ context.Context, attempt, _ int) error {
			if attempt == 1 {
				return errBroken
			}
			return nil
		}, want: []step{{tasktrace.OutcomeRetried, 0, true, 1}, {tasktrace.OutcomeCompleted, 0, false, 2}}},
		{name: "attempts spent", maxAttempts: 2, handle: func(context.Context, int, int) error { return errBroken },
			want: []step{{tasktrace.OutcomeRetried, 0, true, 1}, {tasktrace.OutcomeDeadLettered, ReasonMaxAttempts, true, 2}}},
		{name: "permanent", maxAttempts: 3, handle: func(context.Context, int, int) error { return actor.Permanent(errBroken) },
			want: []step{{tasktrace.OutcomeDeadLettered, ReasonPermanent, true, 1}}},
		{name: "snoozed then completed", handle: func(_ context.Context, _, run int) error {
			if run == 1 {
				return Snooze(20 * time.Millisecond)
			}
			return nil
		}, want: []step{{tasktrace.OutcomeSnoozed, 0, true, 1}, {tasktrace.OutcomeCompleted, 0, false, 1}}},
		{name: "Goexit, retried", maxAttempts: 2, handle: func(_ context.Context, attempt, _ int) error {
			if attempt == 1 {
				runtime.Goexit()
			}
			return nil
		}, want: []step{{tasktrace.OutcomeRetried, 0, true, 1}, {tasktrace.OutcomeCompleted, 0, false, 2}}},
		{name: "undecodable", raw: true, handle: func(context.Context, int, int) error { return nil },
			want: []step{{tasktrace.OutcomeDeadLettered, ReasonUndecodable, true, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxT(t)
			parent := "00-" + c.name
			sendTracer := newTraceLog(map[string]string{"traceparent": parent})
			sender, err := New(ctx, connect(t, srv.ClientURL()), actorName(c.name), nil, Config[int]{Tracer: sendTracer})
			if err != nil {
				t.Fatal(err)
			}
			closeT(t, sender)
			workTracer := newTraceLog(nil)
			var runs atomic.Int32
			ctxParents := make(chan string, 8)
			cfg := Config[int]{Tracer: workTracer, MaxAttempts: c.maxAttempts, FetchWait: 100 * time.Millisecond, OnError: func(*actor.TaskError) {}}
			if c.maxAttempts > 1 {
				cfg.Backoff = fastBackoff
			}
			worker, err := New(ctx, connect(t, srv.ClientURL()), actorName(c.name), func(ctx context.Context, task actor.Task[int]) error {
				ctxParents <- tracerec.Header(ctx, "traceparent")
				return c.handle(ctx, task.Attempt, int(runs.Add(1)))
			}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			closeT(t, worker)

			var id uint64
			if c.raw {
				// A task whose payload no longer decodes, sent with the
				// sender's headers by hand.
				js, _ := jetstream.New(connect(t, srv.ClientURL()))
				h := fromTracer(map[string]string{"traceparent": parent})
				ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: sender.l.subject(placeReady, "_"), Header: h, Data: []byte("not json")})
				if err != nil {
					t.Fatal(err)
				}
				id = ack.Sequence
			} else if id, err = sender.Send(ctx, 1, c.opts...); err != nil {
				t.Fatal(err)
			}

			for i, w := range c.want {
				got := workTracer.Next(t)
				if got.Info.Actor != actorName(c.name) || got.Info.ID != id || got.Info.Type != "int" || got.Info.Attempt != w.attempt || got.Info.Worker == "" {
					t.Errorf("attempt %d: info %+v, want task %d, type int, attempt %d", i+1, got.Info, id, w.attempt)
				}
				if wait := got.Info.Due.Sub(got.Info.Enqueued); got.Info.Enqueued.IsZero() || wait < 0 || i == 0 && wait < c.wait {
					t.Errorf("attempt %d: enqueued %v, due %v later; want due at least %v after enqueued", i+1, got.Info.Enqueued, wait, c.wait)
				}
				if got.Headers["traceparent"] != parent || len(got.Headers) != 1 {
					t.Errorf("attempt %d: the tracer got headers %v, want the sender's, traceparent=%q", i+1, got.Headers, parent)
				}
				var reason Reason
				if got.Result.Reason != nil {
					reason, _ = got.Result.Reason.(Reason)
				}
				if got.Result.Outcome != w.outcome || reason != w.reason || (got.Result.Err != nil) != w.err {
					t.Errorf("attempt %d: result %v, reason %v, error %v; want %v, reason %v, an error %v", i+1, got.Result.Outcome, got.Result.Reason, got.Result.Err, w.outcome, w.reason, w.err)
				}
			}
			if !c.raw {
				if p := <-ctxParents; p != parent {
					t.Errorf("the handler's context holds %v from the tracer, want %q", p, parent)
				}
			}
			workTracer.NoMore(t)
		})
	}
}

// actorName turns a test case's name into an actor's.
func actorName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !namePattern.MatchString(string(c)) {
			b[i] = '-'
		}
	}
	return string(b)
}

// TestTraceDeadLetterReplay checks that a dead letter keeps its task's
// headers, and that the attempt of its replay gets them back.
func TestTraceDeadLetterReplay(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	want := map[string]string{"traceparent": "00-replayed"}
	tr := newTraceLog(want)
	var healed atomic.Bool
	a, err := New(ctx, nc, "replayed", func(ctx context.Context, task actor.Task[int]) error {
		if !healed.Load() {
			return actor.Permanent(errors.New("broken"))
		}
		return nil
	}, Config[int]{Tracer: tr, OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	id, err := a.Send(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Next(t); got.Result.Outcome != tasktrace.OutcomeDeadLettered || got.Result.Reason != ReasonPermanent {
		t.Fatalf("first attempt: %v, reason %v; want dead_lettered, permanent error", got.Result.Outcome, got.Result.Reason)
	}
	var letters []DeadLetter[int]
	eventually(t, 5*time.Second, "a dead letter", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{})
		return err == nil && len(letters) == 1
	})
	_, dead, _ := a.Streams()
	if got, _ := storedTrace(t, nc, dead, letters[0].ID); !maps.Equal(got, want) {
		t.Errorf("the dead letter carries %v, want %v", got, want)
	}

	healed.Store(true)
	ids, err := a.Replay(ctx, letters[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	got := tr.Next(t)
	if got.Info.ID != ids[0] || got.Info.ID == id || got.Info.Attempt != 1 || got.Result.Outcome != tasktrace.OutcomeCompleted {
		t.Errorf("replay's attempt: task %d, attempt %d, %v; want the new task %d, attempt 1, completed", got.Info.ID, got.Info.Attempt, got.Result.Outcome, ids[0])
	}
	if !maps.Equal(got.Headers, want) {
		t.Errorf("replay's attempt got headers %v, want %v", got.Headers, want)
	}
	tr.NoMore(t)
}

// TestTraceGivenBackAndLost closes an actor while its handlers run, and
// cuts another off from the server: their attempts end given back and
// lost, and the attempts that run the tasks again get the headers back.
func TestTraceGivenBackAndLost(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	want := map[string]string{"traceparent": "00-again"}
	stubborn, cutRelease := make(chan struct{}), make(chan struct{})
	started := make(chan string, 3)
	handler := func(ctx context.Context, task actor.Task[string]) error {
		started <- task.Payload
		switch task.Payload {
		case "stubborn":
			<-stubborn // past Close's Grace
			return nil
		case "cut":
			<-ctx.Done()
			<-cutRelease // returns once the task ran elsewhere
			return context.Cause(ctx)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	first := newTraceLog(want)
	a, err := New(ctx, connect(t, srv.ClientURL()), "again", handler, Config[string]{Tracer: first, Workers: 2, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"polite", "stubborn"} {
		if _, err := a.Send(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	closeCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := a.Close(closeCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want an error wrapping the deadline", err)
	}
	got := first.Next(t) // the polite handler returned at once
	if got.Result.Outcome != tasktrace.OutcomeGivenBack || got.Result.Err == nil {
		t.Errorf("polite attempt: %v, error %v; want given_back with the handler's error", got.Result.Outcome, got.Result.Err)
	}
	close(stubborn)
	if got := first.Next(t); got.Result.Outcome != tasktrace.OutcomeGivenBack {
		t.Errorf("stubborn attempt: %v, want given_back", got.Result.Outcome)
	}

	// The cut-off process's lease lapses; the task runs again elsewhere.
	cut := connect(t, srv.ClientURL())
	second := newTraceLog(nil)
	lease := 600 * time.Millisecond
	b, err := New(ctx, cut, "again", func(ctx context.Context, task actor.Task[string]) error {
		if task.Payload == "cut" {
			return handler(ctx, task)
		}
		return nil
	}, Config[string]{Tracer: second, Workers: 1, Lease: lease, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the tasks Close gave back run as their first attempts
		if got := second.Next(t); got.Result.Outcome != tasktrace.OutcomeCompleted || got.Info.Attempt != 1 || !maps.Equal(got.Headers, want) {
			t.Errorf("given-back task's next attempt: %v, attempt %d, headers %v; want completed, 1, %v", got.Result.Outcome, got.Info.Attempt, got.Headers, want)
		}
	}
	if _, err := b.Send(ctx, "cut"); err != nil {
		t.Fatal(err)
	}
	for p := <-started; p != "cut"; p = <-started {
	}
	cut.Close() // no more heartbeats from b
	third := newTraceLog(nil)
	c, err := New(ctx, connect(t, srv.ClientURL()), "again", func(context.Context, actor.Task[string]) error { return nil },
		Config[string]{Tracer: third, Lease: lease, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, c)
	got = third.Next(t)
	if got.Result.Outcome != tasktrace.OutcomeCompleted || got.Info.Attempt != 2 || got.Info.Lost != 1 || !got.Info.Due.IsZero() {
		t.Errorf("the run after a lost one: %v, attempt %d, lost %d, due %v; want completed, 2, 1, unknown (zero)", got.Result.Outcome, got.Info.Attempt, got.Info.Lost, got.Info.Due)
	}
	close(cutRelease)
	if got := second.Next(t); got.Result.Outcome != tasktrace.OutcomeLost || !errors.Is(got.Result.Err, ErrLeaseLost) {
		t.Errorf("the cut-off attempt: %v, error %v; want lost, ErrLeaseLost", got.Result.Outcome, got.Result.Err)
	}
	closeCtx, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = b.Close(closeCtx) // its counters cannot be flushed: its connection is gone
}

// TestTraceEmptyBatch checks that a SendBatch of no payloads, which
// stores nothing, is no send to the Tracer, as pgactor's is not.
func TestTraceEmptyBatch(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	tr := newTraceLog(map[string]string{"traceparent": "00-1-2-01"})
	a, err := New(ctx, nc, "traced", nil, Config[int]{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	ids, err := a.SendBatch(ctx, nil)
	if err != nil || len(ids) != 0 {
		t.Fatalf("SendBatch of nothing = %v, %v; want no IDs and no error", ids, err)
	}
	if sends := tr.Sends(); len(sends) != 0 {
		t.Errorf("the tracer saw %+v, want no send", sends)
	}
}

// TestTracerPanicOnSend checks that a Tracer that panics as a send starts
// fails the send with an error naming it, and stores nothing; and that
// one that panics as the send ends leaves the send's result as it was,
// and logs the panic. Either way the caller learns truly whether its
// tasks are stored, where the panic used to go up its goroutine: a
// caller that did not recover it was taken down by the tracer's bug, and
// one that did could not tell whether its tasks had been stored.
func TestTracerPanicOnSend(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	for i, c := range []struct {
		at     string
		stored bool
	}{{tracerec.AtStartSend, false}, {tracerec.AtSendEnd, true}} {
		t.Run(c.at, func(t *testing.T) {
			var logs testenv.LockedBuffer
			tr := &tracerec.Panicking[tasktrace.AttemptResult]{Recorder: newTraceLog(map[string]string{"traceparent": "x"}), At: c.at}
			a, err := New(ctx, nc, fmt.Sprintf("sendpanic%d", i), nil, Config[int]{Tracer: tr, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			closeT(t, a)
			work, _, _ := a.Streams()
			queued := func() int {
				s, err := a.Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return s.Queued
			}
			for _, send := range []struct {
				name string
				send func() ([]uint64, error)
			}{
				{"Send", func() ([]uint64, error) { id, err := a.Send(ctx, 1); return []uint64{id}, err }},
				{"SendBatch", func() ([]uint64, error) { return a.SendBatch(ctx, []int{2, 3}) }},
			} {
				before := queued()
				ids, err := send.send()
				stored := queued() - before
				if !c.stored {
					if !tracerec.IsPanic(err, "Tracer.StartSend") || stored != 0 || slices.ContainsFunc(ids, func(id uint64) bool { return id != 0 }) {
						t.Errorf("%s: IDs %v, error %v, %d tasks stored; want a panic of Tracer.StartSend, nothing stored", send.name, ids, err, stored)
					}
					continue
				}
				if err != nil || stored != len(ids) || slices.Contains(ids, 0) {
					t.Errorf("%s: IDs %v, error %v, %d tasks stored; want them all stored", send.name, ids, err, stored)
				}
				for _, id := range ids {
					if got, _ := storedTrace(t, nc, work, id); got["traceparent"] != "x" {
						t.Errorf("%s: task %d stored headers %v, want the tracer's", send.name, id, got)
					}
				}
			}
			if c.stored {
				if out := logs.String(); strings.Count(out, tracerec.Panicked("Tracer.StartSend's end")) != 2 {
					t.Errorf("the log does not tell of both panics:\n%s", out)
				}
			}
		})
	}
}

// TestTracerPanicOnAttempt checks that a Tracer's panic on a worker takes
// down neither the worker nor the process, and loses no task. A panic as
// the attempt starts fails the attempt as a handler's panic does, with an
// *actor.PanicError naming Tracer.StartAttempt, the handler not run: the
// task is retried, and dead-lettered with that error once its attempts
// are spent. A panic as the attempt ends leaves the outcome recorded, and
// is logged. Either way the one worker goes on to the next task.
func TestTracerPanicOnAttempt(t *testing.T) {
	srv := startServer(t)
	for i, c := range []struct {
		name  string
		at    string
		until int // the tracer panics for attempts up to until; 0 for all
		// ran is the attempt whose handler ran, 0 for none; letter, the
		// dead letters' reason, 0 for none; failures, how many times
		// OnError hears of each task.
		ran      int
		letter   Reason
		failures int
	}{
		{"StartAttempt once", tracerec.AtStartAttempt, 1, 2, 0, 1},
		{"StartAttempt always", tracerec.AtStartAttempt, 0, 0, ReasonMaxAttempts, 2},
		{"attempt end", tracerec.AtAttemptEnd, 0, 1, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxT(t)
			var logs testenv.LockedBuffer
			var errs testenv.TaskErrors
			var seen runs
			tr := &tracerec.Panicking[tasktrace.AttemptResult]{Recorder: newTraceLog(nil), At: c.at, Until: c.until}
			a, err := New(ctx, connect(t, srv.ClientURL()), fmt.Sprintf("attemptpanic%d", i), func(ctx context.Context, task actor.Task[string]) error {
				seen.add(task)
				return nil
			}, Config[string]{Workers: 1, MaxAttempts: 2, Backoff: fastBackoff, FetchWait: 100 * time.Millisecond, FlushInterval: 20 * time.Millisecond,
				Tracer: tr, Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnError: errs.Add})
			if err != nil {
				t.Fatal(err)
			}
			closeT(t, a)
			for _, p := range []string{"a", "b"} {
				if _, err := a.Send(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, 20*time.Second, "both tasks settled", func() bool {
				s, err := a.Stats(ctx)
				return err == nil && s.Completed+s.DeadLettered == 2 && s.Busy == 0
			})
			ran := map[string][]int{}
			for _, r := range seen.list() {
				ran[r.Payload] = append(ran[r.Payload], r.Attempt)
			}
			want := map[string][]int{}
			if c.ran != 0 {
				want = map[string][]int{"a": {c.ran}, "b": {c.ran}}
			}
			if fmt.Sprint(ran) != fmt.Sprint(want) {
				t.Errorf("the handler ran attempts %v, want %v", ran, want)
			}
			e := errs.All()
			if len(e) != 2*c.failures {
				t.Errorf("OnError heard of %d failures, want %d", len(e), 2*c.failures)
			}
			for _, te := range e {
				if !tracerec.IsPanic(te.Err, "Tracer.StartAttempt") || te.Final != (te.Attempt == 2) {
					t.Errorf("OnError got %v (final %v), want a panic of Tracer.StartAttempt, final at attempt 2", te, te.Final)
				}
			}
			letters, err := a.DeadLetters(ctx, LetterFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if c.letter == 0 && len(letters) != 0 || c.letter != 0 && len(letters) != 2 {
				t.Errorf("dead letters %+v, want %d", letters, map[bool]int{true: 2}[c.letter != 0])
			}
			for _, l := range letters {
				if l.Reason != c.letter || l.Err == nil || !strings.Contains(l.Err.Error(), tracerec.Panicked("Tracer.StartAttempt")) {
					t.Errorf("task %s dead-lettered for %v with %v, want %v with the tracer's panic", l.Raw, l.Reason, l.Err, c.letter)
				}
			}
			for range map[bool]int{true: 2}[c.ran != 0] {
				if got := tr.Next(t); got.Info.Attempt != c.ran || got.Result.Outcome != tasktrace.OutcomeCompleted {
					t.Errorf("the tracer got attempt %+v, want attempt %d completed", got, c.ran)
				}
			}
			if c.at == tracerec.AtAttemptEnd {
				if out := logs.String(); strings.Count(out, tracerec.Panicked("Tracer.StartAttempt's end")) != 2 {
					t.Errorf("the log does not tell of both panics:\n%s", out)
				}
			}
			tr.NoMore(t)
			if s, err := a.Stats(ctx); err != nil || s.Workers != 1 || s.Idle != 1 {
				t.Errorf("Stats = %+v, %v: want the one worker still there, idle", s, err)
			}
		})
	}
}
