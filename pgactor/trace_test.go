package pgactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/internal/tracerec"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// recTracer records what the actor tells its Tracer.
type recTracer = tracerec.Recorder[AttemptResult]

func newRecTracer(headers map[string]string) *recTracer {
	return tracerec.New[AttemptResult](headers)
}

// storedHeaders returns the headers column of task id in table, decoded;
// nil for NULL.
func (r *rig) storedHeaders(table string, id uint64) map[string]string {
	r.t.Helper()
	var raw []byte
	if err := r.pool.QueryRow(context.Background(), expand(r.schema, "SELECT headers FROM {s}."+table+" WHERE id = $1"), int64(id)).Scan(&raw); err != nil {
		r.t.Fatalf("headers of %s %d: %v", table, id, err)
	}
	if raw == nil {
		return nil
	}
	var h map[string]string
	if err := json.Unmarshal(raw, &h); err != nil {
		r.t.Fatalf("headers of %s %d: %s: %v", table, id, raw, err)
	}
	return h
}

// TestTraceSendStoresHeaders checks that every kind of send stores the
// tracer's headers with each task, tells the tracer what it sent, and
// that an actor without a tracer stores NULL.
func TestTraceSendStoresHeaders(t *testing.T) {
	r := newRig(t)
	want := map[string]string{"trace": "t-1", "baggage": "k=v"}
	tr := newRecTracer(want)
	traced := start(r, "traced", nil, Config[int]{Tracer: tr})
	plain := start(r, "plain", nil, Config[int]{})
	inTx := func(send func(ctx context.Context, tx pgx.Tx) ([]uint64, error)) ([]uint64, error) {
		var ids []uint64
		err := pgx.BeginFunc(t.Context(), r.pool, func(tx pgx.Tx) (err error) {
			ids, err = send(t.Context(), tx)
			return err
		})
		return ids, err
	}
	one := func(id uint64, err error) ([]uint64, error) { return []uint64{id}, err }
	runAt := time.Now().Add(time.Hour).Truncate(time.Microsecond)

	for _, c := range []struct {
		name     string
		a        *Actor[int]
		send     func(a *Actor[int]) ([]uint64, error)
		info     SendInfo // without Actor, filled in
		want     map[string]string
		noRecord bool
	}{
		{"Send", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(t.Context(), 1, WithType("mail"))) },
			SendInfo{Type: "mail", Count: 1}, want, false},
		{"SendTx", traced, func(a *Actor[int]) ([]uint64, error) {
			return inTx(func(ctx context.Context, tx pgx.Tx) ([]uint64, error) { return one(a.SendTx(ctx, tx, 2)) })
		}, SendInfo{Type: "int", Count: 1}, want, false},
		{"SendBatch", traced, func(a *Actor[int]) ([]uint64, error) { return a.SendBatch(t.Context(), []int{3, 4, 5}) },
			SendInfo{Type: "int", Count: 3, Batch: true}, want, false},
		{"SendBatchTx", traced, func(a *Actor[int]) ([]uint64, error) {
			return inTx(func(ctx context.Context, tx pgx.Tx) ([]uint64, error) { return a.SendBatchTx(ctx, tx, []int{6, 7}) })
		}, SendInfo{Type: "int", Count: 2, Batch: true}, want, false},
		{"Send in pgpool.With", traced, func(a *Actor[int]) ([]uint64, error) {
			var ids []uint64
			err := r.pool.With(t.Context(), func(ctx context.Context, _ *pgpool.Conn) (err error) {
				ids, err = one(a.Send(ctx, 8))
				return err
			})
			return ids, err
		}, SendInfo{Type: "int", Count: 1}, want, false},
		{"RunAt", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(t.Context(), 9, RunAt(runAt))) },
			SendInfo{Type: "int", Count: 1, RunAt: runAt}, want, false},
		{"After", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(t.Context(), 10, After(90*time.Second))) },
			SendInfo{Type: "int", Count: 1, After: 90 * time.Second}, want, false},
		{"UniqueFor", traced, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(t.Context(), 14, UniqueFor("k", time.Hour))) },
			SendInfo{Type: "int", Count: 1}, want, false},
		{"UniqueFor in a transaction", traced, func(a *Actor[int]) ([]uint64, error) {
			return inTx(func(ctx context.Context, tx pgx.Tx) ([]uint64, error) {
				return one(a.SendTx(ctx, tx, 15, UniqueFor("k2", time.Hour)))
			})
		}, SendInfo{Type: "int", Count: 1}, want, false},
		{"no tracer", plain, func(a *Actor[int]) ([]uint64, error) { return a.SendBatch(t.Context(), []int{11, 12}) },
			SendInfo{}, nil, true},
		{"no tracer, RunAt", plain, func(a *Actor[int]) ([]uint64, error) { return one(a.Send(t.Context(), 13, RunAt(runAt))) },
			SendInfo{}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(tr.Sends())
			ids, err := c.send(c.a)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if got := r.storedHeaders("tasks", id); !maps.Equal(got, c.want) {
					t.Errorf("task %d stored headers %v, want %v", id, got, c.want)
				}
			}
			sends := tr.Sends()[before:]
			if c.noRecord {
				if len(sends) != 0 {
					t.Errorf("the tracer of another actor saw %d sends", len(sends))
				}
				return
			}
			if len(sends) != 1 {
				t.Fatalf("the tracer saw %d sends, want 1", len(sends))
			}
			info := c.info
			info.Actor = "traced"
			if s := sends[0]; s.Info != info || s.Err != nil || !slices.Equal(s.IDs, ids) {
				t.Errorf("the tracer saw %+v, ids %v, error %v; want %+v, ids %v", s.Info, s.IDs, s.Err, info, ids)
			}
		})
	}

	t.Run("pgactor's header names are dropped", func(t *testing.T) {
		forger := start(r, "forger", nil, Config[int]{Tracer: newRecTracer(map[string]string{"trace": "t-2", HeaderPeriod: "2026-01-01T00:00:00Z", "pgactor-x": "y"})})
		id, err := forger.Send(t.Context(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.storedHeaders("tasks", id), map[string]string{"trace": "t-2"}; !maps.Equal(got, want) {
			t.Errorf("stored headers %v, want %v", got, want)
		}
		only := start(r, "only", nil, Config[int]{Tracer: newRecTracer(map[string]string{HeaderSchedule: "s"})})
		if id, err = only.Send(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		if got := r.storedHeaders("tasks", id); got != nil {
			t.Errorf("stored headers %v, want none (NULL)", got)
		}
	})

	t.Run("a refused send ends with its error", func(t *testing.T) {
		before := len(tr.Sends())
		if _, err := traced.Send(t.Context(), 1, UniqueKey("k")); err != nil {
			t.Fatal(err)
		}
		_, err := traced.Send(t.Context(), 2, UniqueKey("k"))
		var dup *DuplicateError
		if !errors.As(err, &dup) {
			t.Fatalf("second send: %v, want a *DuplicateError", err)
		}
		sends := tr.Sends()[before:]
		if len(sends) != 2 || !errors.As(sends[1].Err, &dup) || sends[1].IDs != nil {
			t.Errorf("the tracer saw %+v, want the second send to end with the *DuplicateError and no ids", sends)
		}
	})
}

// TestTraceAttemptOutcomes runs a task to each end an attempt can have,
// on an actor in another pool from its sender's, and checks that the
// tracer gets the sender's headers back, that the handler's context is
// the tracer's, and each attempt's outcome.
func TestTraceAttemptOutcomes(t *testing.T) {
	type step struct {
		outcome Outcome
		reason  Reason
		err     bool // the result carries an error
	}
	errBroken := errors.New("broken")
	for _, c := range []struct {
		name        string
		maxAttempts int
		// handle is the handler's body at each attempt.
		handle func(ctx context.Context, attempt int) error
		// act does what the test does to the running task, given the
		// worker's actor once the first attempt started.
		act  func(t *testing.T, r *rig, a *Actor[int], id uint64)
		want []step
		// uncharged: no attempt is charged, so the Tracer is told of
		// attempt 1 every time.
		uncharged bool
	}{
		{name: "completed", handle: func(context.Context, int) error { return nil },
			want: []step{{OutcomeCompleted, 0, false}}},
		{name: "completed in the task's transaction", handle: func(ctx context.Context, _ int) error {
			tx, err := Tx(ctx)
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, "SELECT 1")
			return err
		}, want: []step{{OutcomeCompleted, 0, false}}},
		{name: "retried, then completed", maxAttempts: 2, handle: func(_ context.Context, attempt int) error {
			if attempt == 1 {
				return errBroken
			}
			return nil
		}, want: []step{{OutcomeRetried, 0, true}, {OutcomeCompleted, 0, false}}},
		{name: "Goexit, retried", maxAttempts: 2, handle: func(_ context.Context, attempt int) error {
			if attempt == 1 {
				runtime.Goexit()
			}
			return nil
		}, want: []step{{OutcomeRetried, 0, true}, {OutcomeCompleted, 0, false}}},
		{name: "attempts spent", maxAttempts: 2, handle: func(context.Context, int) error { return errBroken },
			want: []step{{OutcomeRetried, 0, true}, {OutcomeDeadLettered, ReasonMaxAttempts, true}}},
		{name: "permanent", maxAttempts: 3, handle: func(context.Context, int) error { return actor.Permanent(errBroken) },
			want: []step{{OutcomeDeadLettered, ReasonPermanent, true}}},
		{name: "canceled while running", handle: func(ctx context.Context, _ int) error {
			<-ctx.Done()
			return context.Cause(ctx)
		}, act: func(t *testing.T, r *rig, a *Actor[int], id uint64) {
			if _, err := a.Cancel(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}, want: []step{{OutcomeCanceled, ReasonCanceled, true}}},
		{name: "lease lost", handle: func(ctx context.Context, _ int) error {
			<-ctx.Done()
			return context.Cause(ctx)
		}, act: func(t *testing.T, r *rig, a *Actor[int], id uint64) {
			// Another process holds it now, for long enough that no
			// fetch takes it again during the test.
			r.exec("UPDATE {s}.tasks SET owner = 'another process', available_at = now() + interval '1 hour' WHERE id = $1", int64(id))
		}, want: []step{{OutcomeLost, 0, true}}},
		{name: "snoozed, then completed", maxAttempts: 1, handle: func() func(context.Context, int) error {
			var calls atomic.Int32
			return func(context.Context, int) error {
				if calls.Add(1) == 1 {
					return Snooze(time.Millisecond)
				}
				return nil
			}
		}(), want: []step{{OutcomeSnoozed, 0, true}, {OutcomeCompleted, 0, false}}, uncharged: true},
		{name: "undecodable", handle: func(context.Context, int) error { return nil },
			want: []step{{OutcomeDeadLettered, ReasonUndecodable, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			sendTracer := newRecTracer(map[string]string{"trace": c.name})
			sender := start(r, "outcomes", nil, Config[int]{Tracer: sendTracer})
			id, err := sender.Send(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "undecodable" {
				r.exec("UPDATE {s}.tasks SET payload = 'not json' WHERE id = $1", int64(id))
			}

			workTracer := newRecTracer(nil)
			other := &rig{t: t, dsn: r.dsn, pool: newPool(t, r.dsn, 4), schema: r.schema}
			started := make(chan struct{}, 10)
			ctxTrace := make(chan any, 10)
			cfg := Config[int]{Tracer: workTracer, MaxAttempts: c.maxAttempts, PollInterval: 10 * time.Millisecond, Lease: 300 * time.Millisecond, Logger: quiet(t)}
			if c.maxAttempts > 1 {
				cfg.Backoff = actor.Backoff{Initial: time.Millisecond}
			}
			worker := start(other, "outcomes", func(ctx context.Context, task actor.Task[int]) error {
				ctxTrace <- tracerec.Header(ctx, "trace")
				started <- struct{}{}
				return c.handle(ctx, task.Attempt)
			}, cfg)
			if c.act != nil {
				within(t, started, 20*time.Second, "the handler did not start")
				c.act(t, other, worker, id)
			}
			for i, w := range c.want {
				got := workTracer.Next(t)
				attempt := i + 1
				if c.uncharged {
					attempt = 1
				}
				if got.Info.Actor != "outcomes" || got.Info.ID != id || got.Info.Type != "int" || got.Info.Attempt != attempt {
					t.Errorf("attempt %d: info %+v, want actor outcomes, task %d, type int, attempt %d", i+1, got.Info, id, attempt)
				}
				if got.Headers["trace"] != c.name {
					t.Errorf("attempt %d: the tracer got headers %v, want the sender's, trace=%q", i+1, got.Headers, c.name)
				}
				if res := got.Result; res.Outcome != w.outcome || res.Reason != w.reason || (res.Err != nil) != w.err {
					t.Errorf("attempt %d: result %+v (%v), want outcome %v, reason %v, an error: %v", i+1, res, res.Outcome, w.outcome, w.reason, w.err)
				}
			}
			if c.name != "undecodable" {
				if v := within(t, ctxTrace, time.Second, "the handler never ran"); v != c.name {
					t.Errorf("the handler's context holds %v from the tracer, want %q", v, c.name)
				}
			}
			workTracer.NoMore(t)
		})
	}
}

// TestTraceGivenBack checks that an attempt Close stops waiting for ends
// as given back.
func TestTraceGivenBack(t *testing.T) {
	r := newRig(t)
	tr := newRecTracer(map[string]string{"trace": "x"})
	started := make(chan struct{})
	a, err := New(t.Context(), r.pool, "giveback", func(ctx context.Context, task actor.Task[int]) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, Config[int]{Schema: r.schema, Tracer: tr, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	within(t, started, 20*time.Second, "the handler did not start")
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // stop waiting for the handler at once
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tr.Next(t); got.Result.Outcome != OutcomeGivenBack {
		t.Errorf("result %+v, want given back", got.Result)
	}
}

// TestTraceHeadersFollowTheTask checks that a task's headers go with it
// into the dead letters, by each statement that moves it there, and back
// on replay, and that the attempts of the replayed task get them back,
// due at once.
func TestTraceHeadersFollowTheTask(t *testing.T) {
	r := newRig(t)
	tr := newRecTracer(map[string]string{"trace": "t-9"})
	want := map[string]string{"trace": "t-9"}
	sender := start(r, "follow", nil, Config[int]{Tracer: tr})

	// Cancel moves a waiting task to the dead letters.
	waiting, err := sender.Send(t.Context(), 1, After(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sender.Cancel(t.Context(), waiting); err != nil || n != 1 {
		t.Fatalf("Cancel: %d, %v", n, err)
	}
	if got := r.storedHeaders("dead_letters", waiting); !maps.Equal(got, want) {
		t.Errorf("canceled task's dead letter has headers %v, want %v", got, want)
	}

	// A failed attempt moves a task to the dead letters.
	var failedOnce atomic.Bool
	failing, err := sender.Send(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	worker := start(r, "follow", func(ctx context.Context, task actor.Task[int]) error {
		if task.Payload == 2 && tracerec.Header(ctx, "trace") == "t-9" && failedOnce.CompareAndSwap(false, true) {
			return actor.Permanent(errors.New("broken"))
		}
		return nil
	}, Config[int]{Tracer: tr, PollInterval: 10 * time.Millisecond})
	if got := tr.Next(t); got.Info.ID != failing || got.Result.Outcome != OutcomeDeadLettered {
		t.Fatalf("first attempt %+v, want task %d dead-lettered", got, failing)
	}
	if got := r.storedHeaders("dead_letters", failing); !maps.Equal(got, want) {
		t.Errorf("failed task's dead letter has headers %v, want %v", got, want)
	}

	// Replay brings them back, and the task is due at once: the canceled
	// one's After no longer applies.
	replayed, err := worker.Replay(t.Context(), waiting, failing)
	if err != nil || len(replayed) != 2 {
		t.Fatalf("Replay: %v, %v", replayed, err)
	}
	for range 2 {
		got := tr.Next(t)
		if !maps.Equal(got.Headers, want) || got.Result.Outcome != OutcomeCompleted || got.Info.Attempt != 1 {
			t.Errorf("replayed attempt %+v, want headers %v, attempt 1, completed", got, want)
		}
		if !got.Info.Due.Equal(got.Info.Enqueued) {
			t.Errorf("replayed task %d due at %v, want at once, when enqueued (%v)", got.Info.ID, got.Info.Due, got.Info.Enqueued)
		}
	}
}

// TestTraceDue checks AttemptInfo.Due: the send time for a task due at
// once, RunAt, the send time for a RunAt before it, the send time plus
// After, and after a failed attempt, the end of its backoff.
func TestTraceDue(t *testing.T) {
	r := newRig(t)
	tr := newRecTracer(map[string]string{"trace": "d"})
	const backoff = 100 * time.Millisecond
	var clocks sync.Map // attempt of the retried task → the database's clock in its handler
	a := start(r, "due", func(ctx context.Context, task actor.Task[int]) error {
		if task.Payload == 3 {
			var now time.Time
			if err := r.pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&now); err != nil {
				return err
			}
			clocks.Store(task.Attempt, now)
			if task.Attempt == 1 {
				return errors.New("once")
			}
		}
		return nil
	}, Config[int]{Tracer: tr, PollInterval: 10 * time.Millisecond, MaxAttempts: 2, Backoff: actor.Backoff{Initial: backoff}})
	runAt := time.Now().Add(300 * time.Millisecond).Truncate(time.Microsecond) // the database keeps microseconds
	ids := map[uint64]string{}
	for _, s := range []struct {
		name    string
		payload int
		opts    []SendOption
	}{
		{"now", 1, nil},
		{"RunAt", 2, []SendOption{RunAt(runAt)}},
		{"retry", 3, nil},
		{"After", 4, []SendOption{After(70 * time.Millisecond)}},
		{"RunAt past", 5, []SendOption{RunAt(time.Now().Add(-time.Hour))}},
	} {
		id, err := a.Send(t.Context(), s.payload, s.opts...)
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = s.name
	}
	for range 6 {
		got := tr.Next(t)
		info := got.Info
		switch name := ids[info.ID]; {
		case name == "now" || name == "RunAt past" || name == "retry" && info.Attempt == 1:
			if !info.Due.Equal(info.Enqueued) {
				t.Errorf("%s: due %v, want when enqueued, %v", name, info.Due, info.Enqueued)
			}
		case name == "RunAt":
			if !info.Due.Equal(runAt) {
				t.Errorf("RunAt: due %v, want %v", info.Due, runAt)
			}
		case name == "After":
			if d := info.Due.Sub(info.Enqueued); d != 70*time.Millisecond {
				t.Errorf("After: due %v after it was enqueued, want 70ms", d)
			}
		case name == "retry":
			// The retry is recorded after the first handler returned, and
			// the second attempt fetched once it was due.
			first, _ := clocks.Load(1)
			second, _ := clocks.Load(2)
			failed, ran := first.(time.Time), second.(time.Time)
			if info.Due.Before(failed.Add(backoff)) || info.Due.After(ran) {
				t.Errorf("retry, attempt %d: due %v, want the end of the backoff, between %v and %v", info.Attempt, info.Due, failed.Add(backoff), ran)
			}
		default:
			t.Errorf("an attempt of unknown task %d", info.ID)
		}
	}
}

// TestTraceDueLost checks AttemptInfo.Due for a task taken after its
// lease ran out: when the lost lease did.
func TestTraceDueLost(t *testing.T) {
	r := newRig(t)
	tr := newRecTracer(nil)
	sender := start(r, "lost", nil, Config[int]{})
	id, err := sender.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	// The task as a worker that died left it: sent two minutes ago, taken
	// a minute ago, its lease having run out a second ago.
	var expired time.Time
	if err := r.pool.QueryRow(t.Context(), expand(r.schema, `UPDATE {s}.tasks SET owner = 'gone', runs = 1, attempt = 1,
		enqueued_at = now() - interval '2 minutes', started_at = now() - interval '1 minute', available_at = now() - interval '1 second'
		WHERE id = $1 RETURNING available_at`), int64(id)).Scan(&expired); err != nil {
		t.Fatal(err)
	}
	start(r, "lost", func(context.Context, actor.Task[int]) error { return nil }, Config[int]{Tracer: tr, PollInterval: 10 * time.Millisecond})
	got := tr.Next(t)
	if got.Info.ID != id || got.Info.Attempt != 2 || got.Info.Lost != 1 || !got.Info.Due.Equal(expired) {
		t.Errorf("attempt %+v, want task %d's attempt 2, lost 1, due %v, when the lost lease ran out", got.Info, id, expired)
	}
}

// TestTraceBadHeaders checks that headers that are not a JSON object of
// strings do not stop a task: its attempt starts without them.
func TestTraceBadHeaders(t *testing.T) {
	r := newRig(t)
	tr := newRecTracer(nil)
	sender := start(r, "bad", nil, Config[int]{})
	id, err := sender.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r.exec(`UPDATE {s}.tasks SET headers = '{"n": 1}' WHERE id = $1`, int64(id))
	start(r, "bad", func(context.Context, actor.Task[int]) error { return nil }, Config[int]{Tracer: tr, Logger: quiet(t)})
	if got := tr.Next(t); got.Headers != nil || got.Result.Outcome != OutcomeCompleted {
		t.Errorf("attempt %+v, want no headers and completed", got)
	}
}

// TestTraceOffAllocatesNothing checks that an actor without a Tracer
// spends no allocation on tracing an attempt.
func TestTraceOffAllocatesNothing(t *testing.T) {
	a := &Actor[int]{name: "a"}
	l := &lease{id: 1, attempt: 1, headers: []byte(`{"trace":"x"}`), ctx: context.Background()}
	errFailed := errors.New("x")
	allocs := testing.AllocsPerRun(100, func() {
		if ctx, err := a.startAttempt("a/1", l); ctx != l.ctx || err != nil {
			t.Fatal("the handler's context is not the lease's")
		}
		l.trace.failed(errFailed)
		l.trace.settled(OutcomeCompleted)
		l.trace.deadLettered(ReasonLost)
		l.trace.finish()
	})
	if allocs != 0 {
		t.Errorf("an untraced attempt allocates %v times, want none", allocs)
	}
}

// TestOutcomeString checks the names the outcome attribute takes.
func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{
		OutcomeCompleted: "completed", OutcomeRetried: "retried", OutcomeDeadLettered: "dead_lettered",
		OutcomeCanceled: "canceled", OutcomeLost: "lost", OutcomeGivenBack: "given_back", OutcomeSnoozed: "snoozed", 0: "Outcome(0)", 9: "Outcome(9)",
	} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", o, got, want)
		}
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
	r := newRig(t)
	for i, c := range []struct {
		at     string
		stored bool
	}{{tracerec.AtStartSend, false}, {tracerec.AtSendEnd, true}} {
		t.Run(c.at, func(t *testing.T) {
			var logs testenv.LockedBuffer
			tr := &tracerec.Panicking[AttemptResult]{Recorder: newRecTracer(map[string]string{"trace": "x"}), At: c.at}
			name := fmt.Sprintf("sendpanic%d", i)
			a := start(r, name, nil, Config[int]{Tracer: tr, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			for _, send := range []struct {
				name string
				send func() ([]uint64, error)
			}{
				{"Send", func() ([]uint64, error) { id, err := a.Send(t.Context(), 1); return []uint64{id}, err }},
				{"SendBatch", func() ([]uint64, error) { return a.SendBatch(t.Context(), []int{2, 3}) }},
			} {
				before := r.count("SELECT count(*) FROM {s}.tasks WHERE actor = $1", name)
				ids, err := send.send()
				stored := r.count("SELECT count(*) FROM {s}.tasks WHERE actor = $1", name) - before
				if !c.stored {
					if !tracerec.IsPanic(err, "Tracer.StartSend") || stored != 0 {
						t.Errorf("%s: error %v, %d tasks stored; want a panic of Tracer.StartSend, nothing stored", send.name, err, stored)
					}
					continue
				}
				if err != nil || stored != len(ids) || slices.Contains(ids, 0) {
					t.Errorf("%s: IDs %v, error %v, %d tasks stored; want them all stored", send.name, ids, err, stored)
				}
				for _, id := range ids {
					if got := r.storedHeaders("tasks", id); got["trace"] != "x" {
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
			r := newRig(t)
			var logs testenv.LockedBuffer
			var errs testenv.TaskErrors
			var ran ledger[[2]int]
			tr := &tracerec.Panicking[AttemptResult]{Recorder: newRecTracer(nil), At: c.at, Until: c.until}
			a := start(r, fmt.Sprintf("attemptpanic%d", i), func(ctx context.Context, task actor.Task[int]) error {
				ran.add([2]int{task.Payload, task.Attempt})
				return nil
			}, Config[int]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: 10 * time.Millisecond,
				Tracer: tr, OnError: errs.Add, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			ids := map[uint64]int{}
			for p := 1; p <= 2; p++ {
				id, err := a.Send(t.Context(), p)
				if err != nil {
					t.Fatal(err)
				}
				ids[id] = p
			}
			eventually(t, 20*time.Second, "both tasks settled", func() bool {
				s := stats(t, a)
				return s.Completed+s.DeadLettered == 2 && s.Busy == 0
			})
			if c.ran == 0 && ran.count() != 0 || c.ran != 0 && (ran.count() != 2 || ran.times([2]int{1, c.ran}) != 1 || ran.times([2]int{2, c.ran}) != 1) {
				t.Errorf("the handler ran %d times, want only attempt %d of each task", ran.count(), c.ran)
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
			letters, err := a.DeadLetters(t.Context(), LetterFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if c.letter == 0 && len(letters) != 0 || c.letter != 0 && len(letters) != 2 {
				t.Errorf("dead letters %+v, want %d", letters, map[bool]int{true: 2}[c.letter != 0])
			}
			for _, l := range letters {
				if l.Reason != c.letter || l.Err == nil || !strings.Contains(l.Err.Error(), tracerec.Panicked("Tracer.StartAttempt")) {
					t.Errorf("task %d dead-lettered for %v with %v, want %v with the tracer's panic", l.Task.Payload, l.Reason, l.Err, c.letter)
				}
			}
			for range map[bool]int{true: 2}[c.ran != 0] {
				if got := tr.Next(t); got.Info.Attempt != c.ran || got.Result.Outcome != OutcomeCompleted {
					t.Errorf("the tracer got attempt %+v, want attempt %d completed", got, c.ran)
				}
			}
			if c.at == tracerec.AtAttemptEnd {
				if out := logs.String(); strings.Count(out, tracerec.Panicked("Tracer.StartAttempt's end")) != 2 {
					t.Errorf("the log does not tell of both panics:\n%s", out)
				}
			}
			tr.NoMore(t)
			if s := stats(t, a); s.Workers != 1 {
				t.Errorf("stats %+v: want the one worker still there", s)
			}
		})
	}
}
