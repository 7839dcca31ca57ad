package pgactor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// scheduledRun is what a handler found with ScheduledFor.
type scheduledRun struct {
	payload  string
	schedule string
	period   time.Time
	ok       bool
}

// TestScheduledFor checks that the handler of a scheduled task finds its
// schedule and period with ScheduledFor, again after a replay, that a
// plain task's finds none, and that a Tracer gets the scheduled task's
// attempts, without pgactor's headers.
func TestScheduledFor(t *testing.T) {
	r := newRig(t)
	sender := start(r, "reports", nil, Config[string]{})
	if err := sender.Schedule(t.Context(), "hourly", "@every 1h", "scheduled"); err != nil {
		t.Fatal(err)
	}
	// Closed, its scheduler runs no more: the test fires by hand, for the
	// current hour.
	if err := sender.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.exec(`UPDATE {s}.schedules SET next_at = date_bin('1 hour', now(), 'epoch')`)
	if n, err := sender.fireDue(t.Context()); err != nil || n != 1 {
		t.Fatalf("fireDue: %d, %v", n, err)
	}
	listed, err := ListSchedules(t.Context(), r.pool, r.schema, "reports")
	if err != nil || len(listed) != 1 || listed[0].LastPeriod.IsZero() {
		t.Fatalf("ListSchedules: %+v, %v; want the schedule, with the period fired", listed, err)
	}
	hour := listed[0].LastPeriod.UTC()

	tr := newRecTracer(map[string]string{"trace": "t-s"})
	runs := make(chan scheduledRun, 10)
	var failed atomic.Bool
	worker := start(r, "reports", func(ctx context.Context, task actor.Task[string]) error {
		schedule, period, ok := ScheduledFor(ctx)
		runs <- scheduledRun{task.Payload, schedule, period, ok}
		if task.Payload == "scheduled" && failed.CompareAndSwap(false, true) {
			return actor.Permanent(errors.New("dead-letter it, to replay it"))
		}
		return nil
	}, Config[string]{Tracer: tr, PollInterval: 10 * time.Millisecond})
	plain, err := worker.Send(t.Context(), "plain")
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]scheduledRun{
		"scheduled": {"scheduled", "hourly", hour, true},
		"plain":     {payload: "plain"},
	}
	var scheduled uint64
	for range 2 {
		got := within(t, runs, 20*time.Second, "no task ran")
		if got != want[got.payload] {
			t.Errorf("ScheduledFor in %s's handler: %+v, want %+v", got.payload, got, want[got.payload])
		}
		a := tr.Next(t)
		switch {
		case a.Info.ID == plain:
			if a.Headers["trace"] != "t-s" || len(a.Headers) != 1 {
				t.Errorf("the plain task's attempt got headers %v, want the sender's", a.Headers)
			}
		case a.Headers != nil:
			t.Errorf("the scheduled task's attempt got headers %v, want none: pgactor's are its own", a.Headers)
		default:
			scheduled = a.Info.ID
			if !a.Info.Due.Equal(a.Info.Enqueued) || a.Result.Outcome != OutcomeDeadLettered {
				t.Errorf("the scheduled task's attempt %+v, want due when fired, dead-lettered", a)
			}
		}
	}
	if scheduled == 0 {
		t.Fatal("the Tracer saw no attempt of the scheduled task")
	}

	if ids, err := worker.Replay(t.Context(), scheduled); err != nil || len(ids) != 1 {
		t.Fatalf("Replay: %v, %v", ids, err)
	}
	if got := within(t, runs, 20*time.Second, "the replayed task did not run"); got != want["scheduled"] {
		t.Errorf("ScheduledFor in the replayed task's handler: %+v, want %+v", got, want["scheduled"])
	}
	if a := tr.Next(t); a.Info.ID != scheduled || a.Headers != nil || a.Result.Outcome != OutcomeCompleted {
		t.Errorf("the replayed task's attempt %+v, want task %d completed, without headers", a, scheduled)
	}
}

// TestScheduledForHeaders checks what ScheduledFor makes of a task's
// headers, and of a context that is not a handler's.
func TestScheduledForHeaders(t *testing.T) {
	period := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		headers  string // "" for NULL
		schedule string
		period   time.Time
		ok       bool
	}{
		{"scheduled", `{"pgactor-schedule": "nightly", "pgactor-period": "2026-11-26T02:00:00Z"}`, "nightly", period, true},
		{"another zone", `{"pgactor-schedule": "nightly", "pgactor-period": "2026-11-26T03:00:00+01:00"}`, "nightly", period, true},
		{"with a tracer's", `{"traceparent": "00-x", "pgactor-schedule": "nightly", "pgactor-period": "2026-11-26T02:00:00Z"}`, "nightly", period, true},
		{"no headers", "", "", time.Time{}, false},
		{"a tracer's only", `{"traceparent": "00-x"}`, "", time.Time{}, false},
		{"no period", `{"pgactor-schedule": "nightly"}`, "", time.Time{}, false},
		{"no schedule", `{"pgactor-period": "2026-11-26T02:00:00Z"}`, "", time.Time{}, false},
		{"period not a time", `{"pgactor-schedule": "nightly", "pgactor-period": "2 am"}`, "", time.Time{}, false},
		{"not strings", `{"pgactor-schedule": 1, "pgactor-period": 2}`, "", time.Time{}, false},
		{"not an object", `[1]`, "", time.Time{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &handlerTx{}
			if c.headers != "" {
				st.headers = []byte(c.headers)
			}
			schedule, p, ok := ScheduledFor(context.WithValue(t.Context(), taskKey{}, st))
			if schedule != c.schedule || !p.Equal(c.period) || ok != c.ok || ok && p.Location() != time.UTC {
				t.Errorf("ScheduledFor: %q, %v, %v; want %q, %v, %v", schedule, p, ok, c.schedule, c.period, c.ok)
			}
		})
	}
	if schedule, p, ok := ScheduledFor(t.Context()); schedule != "" || !p.IsZero() || ok {
		t.Errorf("ScheduledFor outside a handler: %q, %v, %v; want nothing", schedule, p, ok)
	}
}
