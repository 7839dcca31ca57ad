package jsmetrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/actorpool/actorpool/metrics"
	"github.com/actorpool/actorpool/metrics/internal/durabletest"
	"github.com/actorpool/actorpool/metrics/pgmetrics"
	"github.com/actorpool/actorpool/pgactor"
)

// fixed is an Actor whose Stats are given: a test of the mapping alone.
type fixed struct {
	name, prefix string
	stats        jsactor.Stats
	err          error
	block        bool // Stats waits for its context to end, as on a server that stopped answering
}

func (f fixed) Name() string   { return f.name }
func (f fixed) Prefix() string { return f.prefix }
func (f fixed) Stats(ctx context.Context) (jsactor.Stats, error) {
	if f.block {
		<-ctx.Done()
		return jsactor.Stats{}, ctx.Err()
	}
	return f.stats, f.err
}

// distinct has a different value in every field, so that a field mapped to
// the wrong series shows: durabletest.Distinct is its exposition.
var distinct = jsactor.Stats{
	Accepted: 100, Completed: 60, DeadLettered: 7, Failed: 9, Retried: 8, Lost: 3, Replayed: 2,
	Queued: 11, Scheduled: 12, Running: 13, Retrying: 14, DeadLetters: 5, OldestQueued: 1500 * time.Millisecond,
	Workers: 16, Busy: 13, Idle: 3, Paused: true,
}

// TestMapping proves that every field of Stats reaches its own series, with
// the right type, value and labels, and that nothing else is reported.
func TestMapping(t *testing.T) {
	c := NewCollector(Options{})
	if err := c.AddActor(fixed{name: "audit", prefix: "app", stats: distinct}); err != nil {
		t.Fatal(err)
	}
	durabletest.CheckMapping(t, c, durabletest.Distinct("prefix", "app"))
}

// TestAddRemove proves that an actor is named by its prefix and name
// together, that the prefix is the actor's, that "" is
// the default prefix, that a name is unique while added, and that Remove
// removes its series.
func TestAddRemove(t *testing.T) {
	tests := []struct {
		name  string
		add   func(c *Collector) error
		want  string // an error containing this; "" for none
		label string // the prefix label of the series added
	}{
		{name: "actor", add: func(c *Collector) error { return c.AddActor(fixed{name: "audit", prefix: "app"}) }, label: "app"},
		{name: "prefix with the separator", add: func(c *Collector) error { return c.AddActor(fixed{name: "audit", prefix: "my_app"}) }, label: "my_app"},
		{name: "name with the separator", add: func(c *Collector) error { return c.AddActor(fixed{name: "audit_log", prefix: "app"}) }, label: "app"},
		{name: "watched, default prefix", add: func(c *Collector) error { return c.Add(unused, "", "audit") }, label: jsactor.DefaultPrefix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector(Options{})
			err := tt.add(c)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("add: %v, want an error containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.add(c); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("under prefix %q is already added", tt.label)) {
				t.Errorf("a second add of one actor: %v, want an error naming it", err)
			}
			if err := c.AddActor(fixed{name: "audit", prefix: "other"}); err != nil {
				t.Errorf("the same name under another prefix: %v", err)
			}
			c.Remove(tt.label, "audit")
			c.Remove(tt.label, "audit_log")
			if n := testutil.CollectAndCount(c); n != len(metricsOf) {
				t.Errorf("after Remove: %d series, want %d (the other prefix's)", n, len(metricsOf))
			}
		})
	}
	c := NewCollector(Options{})
	if err := c.Add(unused, "", "audit"); err != nil {
		t.Fatal(err)
	}
	c.Remove("", "audit")
	if err := c.Add(unused, jsactor.DefaultPrefix, "audit"); err != nil {
		t.Errorf("Remove with prefix \"\" did not remove the actor of the default prefix: %v", err)
	}
}

// TestAddNilConn: Add refuses a nil connection, which would panic in
// every scrape, losing every other actor of the collector with it (before
// the fix it was accepted).
func TestAddNilConn(t *testing.T) {
	c := NewCollector(Options{})
	if err := c.Add(nil, "", "audit"); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("Add(nil, ...): %v, want an error saying nc is nil", err)
	}
	if err := c.Add(unused, "", ""); err == nil {
		t.Error("Add of an actor with no name succeeded")
	}
}

// unused is a connection for the tests of Add that never scrape what they
// add.
var unused = new(nats.Conn)

// TestBesideOthers proves that the collector registers beside
// metrics.Collector and pgmetrics.Collector in one pedantic registry, and
// that the families they share gather into one, with every actor's series:
// their names, types and help agree.
func TestBesideOthers(t *testing.T) {
	labels := prometheus.Labels{"service": "test"}
	m := metrics.NewCollector(metrics.Options{ConstLabels: labels})
	mem, err := actor.New("mail", func(context.Context, actor.Task[string]) error { return nil }, actor.Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close(context.Background())
	m.AddActor("mail", mem.Stats)
	pg := pgmetrics.NewCollector(pgmetrics.Options{ConstLabels: labels})
	pg.AddActor(pgFixed{})
	js := NewCollector(Options{ConstLabels: labels})
	js.AddActor(fixed{name: "audit", prefix: "app", stats: distinct})

	reg := prometheus.NewPedanticRegistry()
	for _, c := range []prometheus.Collector{m, pg, js} {
		if err := reg.Register(c); err != nil {
			t.Fatalf("register %T: %v", c, err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	withBoth, withAll := 0, 0
	for _, f := range families {
		actors := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "actor" {
					actors[l.GetValue()] = true
				}
			}
		}
		if actors["audit"] && actors["ledger"] {
			withBoth++
		}
		if actors["audit"] && actors["ledger"] && actors["mail"] {
			withAll++
		}
	}
	if withBoth != len(metricsOf) {
		t.Errorf("%d families hold the JetStream and the PostgreSQL actor's series, want all %d", withBoth, len(metricsOf))
	}
	// completed, dead_lettered, attempts_failed, retries, queued, retrying,
	// running, oldest_queued, workers, busy_workers.
	if withAll != 10 {
		t.Errorf("%d families hold the in-memory actor's series too, want 10", withAll)
	}
}

// pgFixed is a pgactor actor "ledger" whose Stats are zero.
type pgFixed struct{}

func (pgFixed) Name() string                                 { return "ledger" }
func (pgFixed) Schema() string                               { return "jobs" }
func (pgFixed) Stats(context.Context) (pgactor.Stats, error) { return pgactor.Stats{}, nil }

// TestReadFails proves that an actor whose read fails is reported through
// the registry's error, naming the actor and the prefix, while the others
// are still gathered.
func TestReadFails(t *testing.T) {
	c := NewCollector(Options{})
	c.AddActor(fixed{name: "audit", prefix: "app", stats: distinct})
	c.AddActor(fixed{name: "mail", prefix: "app", err: errors.New("nats: no responders available for request")})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err == nil || !strings.Contains(err.Error(), `jsmetrics: durable actor "mail" under prefix "app": nats: no responders`) {
		t.Errorf("gather: %v, want the read's error naming the actor", err)
	}
	if len(families) != len(metricsOf) {
		t.Errorf("%d families gathered, want the %d of the actor that could be read", len(families), len(metricsOf))
	}
}

// TestTimeout proves that a scrape gives up on a server that does not
// answer after Options.Timeout, with an error that says so.
func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCollector(Options{Timeout: 3 * time.Second})
		if err := c.AddActor(fixed{name: "audit", prefix: "app", block: true}); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		start := time.Now()
		_, err := reg.Gather()
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("the scrape took %v, want the timeout, 3s", took)
		}
		if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
			t.Errorf("gather: %v, want the deadline's error", err)
		}
	})
}

// TestJetStream runs durable actors on a private embedded NATS server into
// a state with every gauge and counter it can reach without killing a
// worker, and checks that the collector reports them: an actor this
// process runs (AddActor) and one it only sends to and watches (Add).
func TestJetStream(t *testing.T) {
	testenv.CheckGoroutines(t)
	srv, err := jsserver.Start(jsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const prefix = "metrics"
	quiet := slog.New(slog.DiscardHandler)
	release := make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	audit, err := jsactor.New(ctx, nc, "audit", func(ctx context.Context, task actor.Task[string]) error {
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
	}, jsactor.Config[string]{
		Prefix: prefix, Workers: 2, MaxAttempts: 2,
		Backoff: actor.Backoff{Initial: time.Hour, Max: time.Hour},
		OnError: func(*actor.TaskError) {}, Logger: quiet, FlushInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close(ctx)
	defer free() // before Close, which waits for the blocked handler
	mail, err := jsactor.New[string](ctx, nc, "mail", nil, jsactor.Config[string]{Prefix: prefix, Logger: quiet, FlushInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer mail.Close(ctx)

	stats := func() jsactor.Stats {
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
	letters, err := audit.DeadLetters(ctx, jsactor.LetterFilter{})
	if err != nil || len(letters) != 1 {
		t.Fatalf("dead letters: %v, %v", letters, err)
	}
	if _, err := audit.Replay(ctx, letters[0].ID); err != nil { // it fails again
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the replayed task dead-lettered again", func() bool { return stats().DeadLettered == 2 })
	letters, _ = audit.DeadLetters(ctx, jsactor.LetterFilter{})
	if len(letters) != 1 {
		t.Fatalf("dead letters after the replay: %v, want the replayed task's", letters)
	}
	if n, err := audit.DeleteDeadLetters(ctx, letters[0].ID); n != 1 || err != nil {
		t.Fatalf("delete a dead letter: %d, %v", n, err)
	}
	if _, err := audit.Send(ctx, "block"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "a task running", func() bool { return stats().Busy == 1 })
	if _, err := audit.SendBatch(ctx, []string{"ok", "ok"}, jsactor.After(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := mail.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mail.SendBatch(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	// The counters reach the server every FlushInterval.
	testenv.Eventually(t, time.Minute, "every send counted", func() bool {
		m, err := jsactor.ReadStats(ctx, nc, prefix, "mail")
		return stats().Accepted == 9 && err == nil && m.Accepted == 2
	})

	c := NewCollector(Options{})
	if err := c.AddActor(audit); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(nc, prefix, "mail"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	durabletest.CheckScenario(t, reg, c, "prefix", prefix)

	free()
	for _, a := range []*jsactor.Actor[string]{audit, mail} {
		if err := a.Close(ctx); err != nil {
			t.Error(err)
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	work, dead, counts := mail.Streams()
	for _, s := range []string{work, dead, counts} {
		if err := js.DeleteStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c.Remove(prefix, "audit")
	_, err = reg.Gather()
	if err == nil || !strings.Contains(err.Error(), `jsmetrics: durable actor "mail" under prefix "metrics"`) ||
		!strings.Contains(err.Error(), "unknown actor") {
		t.Errorf("gather after the streams were deleted: %v, want an error naming the actor and saying it is unknown", err)
	}
}
