package pgmetrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/metrics"
	"github.com/actorpool/actorpool/metrics/internal/durabletest"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// fixed is an Actor whose Stats are given: a test of the mapping alone.
type fixed struct {
	name, schema string
	stats        pgactor.Stats
	err          error
}

func (f fixed) Name() string   { return f.name }
func (f fixed) Schema() string { return f.schema }
func (f fixed) Stats(context.Context) (pgactor.Stats, error) {
	return f.stats, f.err
}

// distinct has a different value in every field, so that a field mapped to
// the wrong series shows: durabletest.Distinct is its exposition.
var distinct = pgactor.Stats{
	Accepted: 100, Completed: 60, DeadLettered: 7, Failed: 9, Retried: 8, Lost: 3, Replayed: 2,
	Queued: 11, Scheduled: 12, Running: 13, Retrying: 14, DeadLetters: 5, OldestQueued: 1500 * time.Millisecond,
	Workers: 16, Busy: 13, Idle: 3, Paused: true,
}

// TestMapping proves that every field of Stats reaches its own series, with
// the right type, value and labels, and that nothing else is reported.
func TestMapping(t *testing.T) {
	c := NewCollector(Options{})
	if err := c.AddActor(fixed{name: "audit", schema: "jobs", stats: distinct}); err != nil {
		t.Fatal(err)
	}
	durabletest.CheckMapping(t, c, durabletest.Distinct("schema", "jobs"))
}

// TestAddRemove proves that an actor is named by its schema and name
// together, that a name is unique while added, and that Remove removes its
// series.
func TestAddRemove(t *testing.T) {
	c := NewCollector(Options{})
	a := fixed{name: "audit", schema: "jobs", stats: distinct}
	if err := c.AddActor(a); err != nil {
		t.Fatal(err)
	}
	if err := c.AddActor(a); err == nil || !strings.Contains(err.Error(), `"audit" in schema "jobs" is already added`) {
		t.Errorf("a second AddActor of one actor: %v, want an error naming it", err)
	}
	if err := c.AddActor(fixed{name: "audit", schema: "other", stats: distinct}); err != nil {
		t.Errorf("the same name in another schema: %v", err)
	}
	if n := testutil.CollectAndCount(c, "actorpool_actor_queued_tasks"); n != 2 {
		t.Errorf("%d queued series, want 2", n)
	}
	c.Remove("jobs", "audit")
	if n := testutil.CollectAndCount(c); n != len(metricsOf) {
		t.Errorf("after Remove: %d series, want %d (the other schema's)", n, len(metricsOf))
	}
	if err := c.AddActor(a); err != nil {
		t.Errorf("AddActor after Remove: %v", err)
	}
}

// TestAddNilQuerier: Add refuses a nil db, which would panic in every
// scrape, losing every other actor of the collector with it (before the
// fix it was accepted).
func TestAddNilQuerier(t *testing.T) {
	c := NewCollector(Options{})
	if err := c.Add(nil, "jobs", "audit"); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("Add(nil, ...): %v, want an error saying db is nil", err)
	}
	if err := c.Add(&pgpool.Pool{}, "jobs", ""); err == nil {
		t.Error("Add of an actor with no name succeeded")
	}
}

// TestBesideMetrics proves that the collector registers beside
// metrics.Collector in one pedantic registry, and that the families they
// share gather into one, with both actors' series: their names, types and
// help agree.
func TestBesideMetrics(t *testing.T) {
	m := metrics.NewCollector(metrics.Options{ConstLabels: prometheus.Labels{"service": "test"}})
	mem, err := actor.New("mail", func(context.Context, actor.Task[string]) error { return nil }, actor.Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close(context.Background())
	m.AddActor("mail", mem.Stats)
	d := NewCollector(Options{ConstLabels: prometheus.Labels{"service": "test"}})
	d.AddActor(fixed{name: "audit", schema: "jobs", stats: distinct})

	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(d); err != nil {
		t.Fatalf("register beside metrics.Collector: %v", err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	shared := 0
	for _, f := range families {
		actors := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "actor" {
					actors[l.GetValue()] = true
				}
			}
		}
		if actors["mail"] && actors["audit"] {
			shared++
		}
	}
	// completed, dead_lettered, attempts_failed, retries, queued, retrying,
	// running, oldest_queued, workers, busy_workers.
	if shared != 10 {
		t.Errorf("%d families hold both actors' series, want 10", shared)
	}
}

// TestReadFails proves that an actor whose read fails is reported through
// the registry's error, naming the actor and the schema, while the others
// are still gathered.
func TestReadFails(t *testing.T) {
	c := NewCollector(Options{})
	c.AddActor(fixed{name: "audit", schema: "jobs", stats: distinct})
	c.AddActor(fixed{name: "mail", schema: "jobs", err: errors.New("connection refused")})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err == nil || !strings.Contains(err.Error(), `pgmetrics: durable actor "mail" in schema "jobs": connection refused`) {
		t.Errorf("gather: %v, want the read's error naming the actor", err)
	}
	if len(families) != len(metricsOf) {
		t.Errorf("%d families gathered, want the %d of the actor that could be read", len(families), len(metricsOf))
	}
}

// blocking is a Querier whose statements wait until their context ends,
// as on a server that stopped answering.
type blocking struct{}

func (blocking) Query(ctx context.Context, _ string, _ ...any) (pgx.Rows, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blocking) QueryRow(ctx context.Context, _ string, _ ...any) pgx.Row {
	<-ctx.Done()
	return errRow{ctx.Err()}
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// TestTimeout proves that a scrape gives up on a server that does not
// answer after Options.Timeout, with an error that says so.
func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCollector(Options{Timeout: 3 * time.Second})
		if err := c.Add(blocking{}, "jobs", "audit"); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		start := time.Now()
		_, err := reg.Gather()
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("the scrape took %v, want the timeout, 3s", took)
		}
		if !errors.Is(err, context.DeadlineExceeded) && (err == nil || !strings.Contains(err.Error(), "context deadline exceeded")) {
			t.Errorf("gather: %v, want the deadline's error", err)
		}
	})
}

var schemaSeq atomic.Int64

// TestPostgres runs a durable actor on the real PostgreSQL into a state
// with every gauge and counter it can reach without killing a worker,
// and checks that the collector reports them, read with one query per
// actor: an actor this process runs (AddActor) and one it only sends to
// (Add), whose workers are not reported. A dropped schema is then
// reported as an error that says what to run.
func TestPostgres(t *testing.T) {
	testenv.CheckGoroutines(t)
	dsn := testenv.Postgres(t)
	ctx := context.Background()
	cfg, err := pgpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = int32(8)
	pool, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	schema := fmt.Sprintf("pgmetrics_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	if _, _, err := pgactor.Migrate(ctx, pool, schema); err != nil {
		t.Fatal(err)
	}
	defer pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")

	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	quiet := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	audit, err := pgactor.New(ctx, pool, "audit", func(ctx context.Context, task actor.Task[string]) error {
		switch task.Payload {
		case "permanent":
			return actor.Permanent(errors.New("refused"))
		case "retry":
			return errors.New("try later")
		case "block":
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}, pgactor.Config[string]{
		Schema: schema, Workers: 2, MaxAttempts: 2,
		Backoff: actor.Backoff{Initial: time.Hour, Max: time.Hour},
		OnError: func(*actor.TaskError) {}, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close(ctx)
	defer free() // before Close, which waits for the blocked handler
	mail, err := pgactor.New[string](ctx, pool, "mail", nil, pgactor.Config[string]{Schema: schema, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer mail.Close(ctx)

	stats := func() pgactor.Stats {
		s, err := audit.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, p := range []string{"ok", "ok", "ok", "permanent", "retry"} {
		if _, err := audit.Send(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, time.Minute, "3 completed, 1 dead-lettered, 1 retrying", func() bool {
		s := stats()
		return s.Completed == 3 && s.DeadLettered == 1 && s.Retrying == 1
	})
	letters, err := audit.DeadLetters(ctx, pgactor.LetterFilter{})
	if err != nil || len(letters) != 1 {
		t.Fatalf("dead letters: %v, %v", letters, err)
	}
	if _, err := audit.Replay(ctx, letters[0].Task.ID); err != nil { // it fails again
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the replayed task dead-lettered again", func() bool { return stats().DeadLettered == 2 })
	letters, _ = audit.DeadLetters(ctx, pgactor.LetterFilter{})
	if n, err := audit.DeleteDeadLetters(ctx, letters[0].Task.ID); n != 1 || err != nil {
		t.Fatalf("delete a dead letter: %d, %v", n, err)
	}
	if _, err := audit.Send(ctx, "block"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "a task running", func() bool { return stats().Busy == 1 })
	if _, err := audit.SendBatch(ctx, []string{"ok", "ok"}, pgactor.After(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := mail.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mail.SendBatch(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}

	c := NewCollector(Options{})
	if err := c.AddActor(audit); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(pool, schema, "mail"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	durabletest.CheckScenario(t, reg, c, "schema", schema)

	free()
	for _, a := range []interface{ Close(context.Context) error }{audit, mail} {
		if err := a.Close(ctx); err != nil {
			t.Error(err)
		}
	}
	if _, err := pool.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	c.Remove(schema, "audit")
	_, err = reg.Gather()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`pgmetrics: durable actor "mail" in schema %q`, schema)) ||
		!strings.Contains(err.Error(), "actorpool migrate") {
		t.Errorf("gather after the schema was dropped: %v, want an error naming the actor and saying what to run", err)
	}
}
