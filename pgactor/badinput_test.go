package pgactor

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// configFields returns the fields named by the *actor.ConfigError values
// joined in err.
func configFields(err error) []string {
	var fields []string
	var walk func(error)
	walk = func(err error) {
		if ce, ok := err.(*actor.ConfigError); ok {
			fields = append(fields, ce.Field)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	slices.Sort(fields)
	return fields
}

// TestConfigValidate checks that each broken rule is reported with its
// field, the shared ones by actor.Config's rules.
func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg    Config[int]
		fields []string
		rule   string
	}{
		{Config[int]{}, nil, ""},
		{Config[int]{Workers: -1}, []string{"Workers"}, "Config.Workers is -1: must not be negative"},
		{Config[int]{Workers: 2, MaxWorkers: 3}, []string{"Workers"}, "not both"},
		{Config[int]{MinWorkers: 4, MaxWorkers: 2}, []string{"MinWorkers"}, "must not exceed MaxWorkers (2)"},
		{Config[int]{Backoff: actor.Backoff{Initial: time.Second}}, []string{"Backoff"}, "unless MaxAttempts is more than 1 (it is 0)"},
		{Config[int]{Schema: "Bad-Name"}, []string{"Schema"}, `Config.Schema is "Bad-Name": must be 1 to 63 lower-case letters`},
		{Config[int]{Lease: time.Millisecond}, []string{"Lease"}, "Config.Lease is 1ms: must be at least 100ms (zero means the default, 5s)"},
		{Config[int]{Lease: time.Second, Heartbeat: 600 * time.Millisecond}, []string{"Heartbeat"}, "must not exceed half the Lease (1s)"},
		{Config[int]{Heartbeat: 3 * time.Second}, []string{"Heartbeat"}, "half the Lease (5s)"},
		{Config[int]{Heartbeat: math.MaxInt64}, []string{"Heartbeat"}, "half the Lease (5s)"}, // twice it overflows
		{Config[int]{PollInterval: -time.Second}, []string{"PollInterval"}, "Config.PollInterval is -1s: must not be negative"},
		{Config[int]{FetchBatch: 20000}, []string{"FetchBatch"}, "Config.FetchBatch is 20000: must be between 0 and 10000"},
		{Config[int]{Rounds: -1}, []string{"Rounds"}, "Config.Rounds is -1: must be between 0 and 64 (zero means the default, 2)"},
		{Config[int]{Rounds: 65}, []string{"Rounds"}, "Config.Rounds is 65: must be between 0 and 64"},
		{Config[int]{Rounds: 64}, nil, ""},
		{Config[int]{MaxLost: -1, MaintenanceInterval: -1}, []string{"MaintenanceInterval", "MaxLost"}, "must not be negative"},
	} {
		err := tt.cfg.Validate()
		if got := configFields(err); !slices.Equal(got, tt.fields) || (err != nil && !strings.Contains(err.Error(), tt.rule)) {
			t.Errorf("%+v: %v; want fields %v with %q", tt.cfg, err, tt.fields, tt.rule)
		}
	}
}

// TestNewErrors checks New's refusals: bad names, no pool, a send-only
// actor asked for workers, a bad config, a schema not migrated.
func TestNewErrors(t *testing.T) {
	r := newRig(t)
	h := func(context.Context, actor.Task[int]) error { return nil }
	ctx := t.Context()
	for _, tt := range []struct {
		name    string
		pool    bool
		handler actor.Handler[int]
		cfg     Config[int]
		want    string
	}{
		{"", true, h, Config[int]{}, "the name is empty"},
		{strings.Repeat("x", 201), true, h, Config[int]{}, "at most 200 bytes"},
		{"a", false, h, Config[int]{}, "the pool is nil"},
		{"a", true, nil, Config[int]{Workers: 2}, "a send-only actor (nil handler) runs no workers"},
		{"a", true, h, Config[int]{Workers: -2}, "pgactor: Config.Workers is -2: must not be negative"},
		{"a", true, h, Config[int]{Schema: "pgactor_never_migrated"}, "run pgactor.Migrate or `actorpool migrate --postgres URL --schema pgactor_never_migrated`"},
	} {
		cfg := tt.cfg
		if cfg.Schema == "" {
			cfg.Schema = r.schema
		}
		p := r.pool
		if !tt.pool {
			p = nil
		}
		a, err := New(ctx, p, tt.name, tt.handler, cfg)
		if err == nil {
			a.Close(ctx)
			t.Errorf("New(%q, %+v) succeeded", tt.name, tt.cfg)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q, %+v): %v; want %q", tt.name, tt.cfg, err, tt.want)
		}
		if tt.cfg.Schema != "" && !errors.Is(err, ErrNoSchema) {
			t.Errorf("New on a schema never migrated: %v, want ErrNoSchema", err)
		}
	}
}

// TestReadStatsErrors checks ReadStats and Actors on unknown actors and
// missing schemas.
func TestReadStatsErrors(t *testing.T) {
	r := newRig(t)
	start(r, "known", nil, Config[int]{})
	ctx := t.Context()
	if _, err := ReadStats(ctx, r.pool, r.schema, "unknown"); !errors.Is(err, ErrUnknownActor) || !strings.Contains(err.Error(), `"unknown"`) {
		t.Errorf("stats of an unknown actor: %v, want ErrUnknownActor naming it", err)
	}
	if _, err := ReadStats(ctx, r.pool, r.schema, "known"); err != nil {
		t.Errorf("stats of a known actor: %v", err)
	}
	if _, err := ReadStats(ctx, r.pool, "pgactor_never_migrated", "known"); !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), "actorpool migrate") {
		t.Errorf("stats in a schema never migrated: %v, want ErrNoSchema saying what to run", err)
	}
	if _, err := ReadStats(ctx, r.pool, "Bad Name", "known"); err == nil {
		t.Error("stats in a badly named schema succeeded")
	}
	if names, err := Actors(ctx, r.pool, r.schema); err != nil || !slices.Equal(names, []string{"known"}) {
		t.Errorf("actors: %v, %v", names, err)
	}
	if _, err := Actors(ctx, r.pool, "pgactor_never_migrated"); !errors.Is(err, ErrNoSchema) {
		t.Errorf("actors in a schema never migrated: %v, want ErrNoSchema", err)
	}
}

// TestUndecodable checks that a task whose payload no longer decodes — its
// type changed between the deploy that sent it and the one that runs it —
// goes to the dead letters with its own reason and does not block the
// tasks behind it.
func TestUndecodable(t *testing.T) {
	r := newRig(t)
	old := start(r, "changed", nil, Config[string]{})
	bad, err := old.Send(t.Context(), "not a number", WithType("count"))
	if err != nil {
		t.Fatal(err)
	}
	var errs testenv.TaskErrors
	ran := make(chan int, 1)
	a := start(r, "changed", forward(ran), Config[int]{Workers: 1, FetchBatch: 1, OnError: errs.Add, MaxAttempts: 5})
	if _, err := a.Send(t.Context(), 7); err != nil {
		t.Fatal(err)
	}
	if p := within(t, ran, 10*time.Second, "the task behind an undecodable one never ran"); p != 7 {
		t.Errorf("ran %d", p)
	}
	eventually(t, 10*time.Second, "dead-lettered", func() bool { return stats(t, a).DeadLettered == 1 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{Reason: ReasonUndecodable})
	if err != nil || len(letters) != 1 {
		t.Fatalf("undecodable letters: %v, %v", letters, err)
	}
	l := letters[0]
	var de *DecodeError
	if l.Task.ID != bad || string(l.Raw) != `"not a number"` || !errors.As(l.DecodeErr, &de) || l.Attempts != 0 || l.Task.Type != "count" ||
		l.Err == nil || !strings.Contains(l.Err.Error(), "cannot decode payload") {
		t.Errorf("letter %+v", l)
	}
	e := errs.All()
	if len(e) != 1 || !e[0].Final || !errors.As(e[0].Err, &de) || de.ID != bad || de.Actor != "changed" {
		t.Errorf("OnError got %v, want one final *DecodeError", e)
	}
	if s := stats(t, a); s.Failed != 0 {
		t.Errorf("an undecodable task counted as a failed attempt: %+v", s)
	}
}

// TestTextInputsRefused checks that a name, key or type PostgreSQL cannot
// store as text — with a NUL byte, or not UTF-8 — is refused before any
// statement, by an error naming the option and saying what is allowed,
// rather than by the server's encoding error; and that nothing is stored.
func TestTextInputsRefused(t *testing.T) {
	r := newRig(t)
	ctx := t.Context()
	a := start(r, "text", nil, Config[int]{})
	for _, tt := range []struct {
		what string
		err  func() error
		want string
	}{
		{"actor name with NUL", func() error {
			b, err := New(ctx, r.pool, "a\x00b", nil, Config[int]{Schema: r.schema})
			if err == nil {
				b.Close(ctx)
			}
			return err
		}, "the name must be valid UTF-8, without NUL,"},
		{"schedule name with NUL", func() error { return a.Schedule(ctx, "s\x00", "@hourly", 1) }, "the name must be valid UTF-8, without NUL,"},
		{"schedule type with NUL", func() error { return a.Schedule(ctx, "s", "@hourly", 1, ScheduleType("t\x00")) }, `ScheduleType("t\x00"): the name must be valid UTF-8, without NUL`},
		{"schedule type not UTF-8", func() error { return a.Schedule(ctx, "s", "@hourly", 1, ScheduleType("t\xff")) }, `ScheduleType("t\xff"): the name must be valid UTF-8, without NUL`},
		{"unique key with NUL", func() error { _, err := a.Send(ctx, 1, UniqueKey("k\x00")); return err }, `UniqueKey("k\x00"): the key must be valid UTF-8, without NUL`},
		{"unique key not UTF-8", func() error { _, err := a.Send(ctx, 1, UniqueKey("k\xff")); return err }, `UniqueKey("k\xff"): the key must be valid UTF-8, without NUL`},
		{"UniqueFor key with NUL", func() error { _, err := a.Send(ctx, 1, UniqueFor("k\x00", time.Hour)); return err }, `UniqueFor("k\x00"): the key must be valid UTF-8, without NUL`},
		{"type with NUL", func() error { _, err := a.Send(ctx, 1, WithType("t\x00")); return err }, `WithType("t\x00"): the name must be valid UTF-8, without NUL`},
		{"type not UTF-8", func() error { _, err := a.SendBatch(ctx, []int{1}, WithType("t\xff")); return err }, `WithType("t\xff"): the name must be valid UTF-8, without NUL`},
	} {
		err := tt.err()
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "pgactor") {
			t.Errorf("%s: %v; want an error saying %q", tt.what, err, tt.want)
		}
	}
	for _, table := range []string{"tasks", "schedules", "unique_periods"} {
		if n := r.count(`SELECT count(*) FROM {s}.` + table); n != 0 {
			t.Errorf("refused requests left %d rows in %s", n, table)
		}
	}
	if n := r.count(`SELECT count(*) FROM {s}.actors`); n != 1 {
		t.Errorf("%d actors registered, want 1", n)
	}
}

// TestDecodePanicDeadLetters checks that a task whose payload makes the
// codec panic is undecodable: dead-lettered, with the panic as its error,
// and listed by DeadLetters, while the tasks behind it run; the panic
// took the process down, and every process that fetched the task next.
func TestDecodePanicDeadLetters(t *testing.T) {
	r := newRig(t)
	ran := make(chan string, 2)
	a := start(r, "decodepanic", func(ctx context.Context, task actor.Task[testenv.Brittle]) error {
		ran <- task.Payload.V
		return nil
	}, Config[testenv.Brittle]{Workers: 1, FetchBatch: 1})
	for _, v := range []string{"boom", "fine"} {
		if _, err := a.Send(t.Context(), testenv.Brittle{V: v}); err != nil {
			t.Fatal(err)
		}
	}
	if v := within(t, ran, 10*time.Second, "the task behind the brittle one never ran"); v != "fine" {
		t.Errorf("ran %q, want fine", v)
	}
	eventually(t, 10*time.Second, "dead-lettered", func() bool { return stats(t, a).DeadLettered == 1 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{Reason: ReasonUndecodable})
	if err != nil || len(letters) != 1 {
		t.Fatalf("undecodable letters: %v, %v", letters, err)
	}
	var pe *actor.PanicError
	if l := letters[0]; !errors.As(l.DecodeErr, &pe) || l.Err == nil || !strings.Contains(l.Err.Error(), "brittle: unexpected value") {
		t.Errorf("dead letter %+v, want the decode's panic as its error", l)
	}
}
