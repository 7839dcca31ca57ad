package otelpgactor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgactor/otelpgactor"
)

// newReader returns a manual reader and a meter provider reading into
// it.
func newReader(t testing.TB) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	return reader, mp
}

// collect returns the metrics of the reader's next collection, by name.
func collect(t testing.TB, reader *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelpgactor.ScopeName {
			t.Errorf("a metric of scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// counts returns the counter's values by the attribute key.
func counts(t testing.TB, data metricdata.Aggregation, key attribute.Key) map[string]int64 {
	t.Helper()
	sum, ok := data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("got %T, want a sum of int64", data)
	}
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(key)
		out[v.Emit()] += dp.Value
	}
	return out
}

// histogram returns the histogram's count and sum over its data points,
// and the smallest value.
func histogram(t testing.TB, data metricdata.Aggregation) (count uint64, sum, low float64) {
	t.Helper()
	h, ok := data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("got %T, want a histogram of float64", data)
	}
	low = -1
	for _, dp := range h.DataPoints {
		count += dp.Count
		sum += dp.Sum
		if m, ok := dp.Min.Value(); ok && (low < 0 || m < low) {
			low = m
		}
	}
	return count, sum, low
}

// TestAttemptMetrics runs tasks that complete, that fail once, and that
// fail for good, and checks the outcome counts, the attempts' durations,
// and their times in queue — the retry's too.
func TestAttemptMetrics(t *testing.T) {
	testenv.CheckGoroutines(t)
	reader, mp := newReader(t)
	pool := newPool(t)
	schema := newSchema(t, pool)
	tracer := otelpgactor.NewTracer(otelpgactor.WithMeterProvider(mp))
	sender := start[string](t, pool, schema, "work", nil, pgactor.Config[string]{Tracer: tracer})
	payloads := []string{"ok", "ok", "ok", "flaky", "broken"}
	if _, err := sender.SendBatch(t.Context(), payloads); err != nil {
		t.Fatal(err)
	}
	if _, err := sender.Send(t.Context(), "later", pgactor.After(50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// The worker starts after the sends, so that every task waits.
	start(t, newPool(t), schema, "work", func(ctx context.Context, task actor.Task[string]) error {
		switch {
		case task.Payload == "flaky" && task.Attempt == 1:
			return errors.New("once")
		case task.Payload == "broken":
			return actor.Permanent(errors.New("broken"))
		}
		return nil
	}, pgactor.Config[string]{Tracer: tracer, MaxAttempts: 2})

	want := map[string]int64{"completed": 5, "retried": 1, "dead_lettered": 1}
	var got map[string]int64
	testenv.Eventually(t, 20*time.Second, "7 attempts counted", func() bool {
		m := collect(t, reader)["actorpool.task.attempts"]
		if m == nil {
			return false
		}
		got = counts(t, m, otelpgactor.OutcomeKey)
		return got["completed"]+got["retried"]+got["dead_lettered"] >= 7
	})
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attempts with outcome %s: %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}

	m := collect(t, reader)
	if n, sum, _ := histogram(t, m["messaging.process.duration"]); n != 7 || sum <= 0 {
		t.Errorf("messaging.process.duration: %d attempts, %v s in all; want 7, more than 0", n, sum)
	}
	n, sum, low := histogram(t, m["actorpool.task.queue_time"])
	if n != 7 || sum <= 0 || low <= 0 {
		t.Errorf("actorpool.task.queue_time: %d attempts, %v s in all, the least %v s; want 7 (every attempt, the retry's too), each more than 0", n, sum, low)
	}
	errs := counts(t, m["actorpool.task.attempts"], "error.type")
	if want := (map[string]int64{"": 5, "*errors.errorString": 1, "*actor.permanentError": 1}); !equalMaps(errs, want) {
		t.Errorf("attempts by error.type %v, want %v", errs, want)
	}
}

// countingSource counts the Stats reads of an actor.
type countingSource struct {
	otelpgactor.Source
	reads atomic.Int64
}

func (c *countingSource) Stats(ctx context.Context) (pgactor.Stats, error) {
	c.reads.Add(1)
	return c.Source.Stats(ctx)
}

// gauges returns the int64 gauge's values by the attribute key.
func gauges(t testing.TB, data metricdata.Aggregation, key attribute.Key) map[string]int64 {
	t.Helper()
	g, ok := data.(metricdata.Gauge[int64])
	if !ok {
		t.Fatalf("got %T, want a gauge of int64", data)
	}
	out := map[string]int64{}
	for _, dp := range g.DataPoints {
		if name, _ := dp.Attributes.Value("messaging.destination.name"); name.AsString() != "depth" {
			t.Errorf("a data point of %v", dp.Attributes)
		}
		v, _ := dp.Attributes.Value(key)
		out[v.Emit()] = dp.Value
	}
	return out
}

// TestDepthMetrics puts tasks of an actor in every state, and checks
// that the gauges RegisterMetrics reports equal Stats, from one read per
// collection, and that nothing is read once unregistered.
func TestDepthMetrics(t *testing.T) {
	testenv.CheckGoroutines(t)
	reader, mp := newReader(t)
	pool := newPool(t)
	schema := newSchema(t, pool)
	release := make(chan struct{})
	a := start(t, pool, schema, "depth", func(ctx context.Context, task actor.Task[string]) error {
		switch task.Payload {
		case "retry":
			return errors.New("again, in an hour")
		case "block":
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	}, pgactor.Config[string]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Hour}})
	t.Cleanup(func() { close(release) }) // before the actor closes

	send := func(p string, opts ...pgactor.SendOption) uint64 {
		t.Helper()
		id, err := a.Send(t.Context(), p, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	wait := func(what string, cond func(s pgactor.Stats) bool) {
		t.Helper()
		testenv.Eventually(t, 20*time.Second, what, func() bool {
			s, err := a.Stats(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return cond(s)
		})
	}
	send("retry")
	wait("a task retrying", func(s pgactor.Stats) bool { return s.Retrying == 1 })
	send("block")
	wait("a task running", func(s pgactor.Stats) bool { return s.Running == 1 })
	send("q1")
	send("q2")
	send("later", pgactor.After(time.Hour))
	if _, err := a.Cancel(t.Context(), send("canceled", pgactor.After(time.Hour))); err != nil {
		t.Fatal(err)
	}

	src := &countingSource{Source: a}
	reg, err := otelpgactor.RegisterMetrics(src, otelpgactor.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	m := collect(t, reader)
	s, err := a.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := src.reads.Load(); n != 1 {
		t.Errorf("a collection read Stats %d times, want once", n)
	}
	wantTasks := map[string]int64{"queued": int64(s.Queued), "scheduled": int64(s.Scheduled), "running": int64(s.Running), "retrying": int64(s.Retrying)}
	if want := (map[string]int64{"queued": 2, "scheduled": 1, "running": 1, "retrying": 1}); !equalMaps(wantTasks, want) {
		t.Fatalf("the test did not reach the states it meant to: Stats %+v", s)
	}
	if got := gauges(t, m["actorpool.actor.tasks"], otelpgactor.StateKey); !equalMaps(got, wantTasks) {
		t.Errorf("actorpool.actor.tasks %v, want Stats's %v", got, wantTasks)
	}
	if got := gauges(t, m["actorpool.actor.dead_letters"], "none"); got[""] != int64(s.DeadLetters) || s.DeadLetters != 1 {
		t.Errorf("actorpool.actor.dead_letters %v, want Stats's %d (1)", got, s.DeadLetters)
	}
	g, ok := m["actorpool.actor.oldest_queued"].(metricdata.Gauge[float64])
	if !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value <= 0 {
		t.Errorf("actorpool.actor.oldest_queued %+v, want one value, more than 0", m["actorpool.actor.oldest_queued"])
	}

	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	m = collect(t, reader)
	if n := src.reads.Load(); n != 1 {
		t.Errorf("Stats read %d times after Unregister, want no more than once in all", n)
	}
	if _, ok := m["actorpool.actor.tasks"]; ok {
		t.Errorf("actorpool.actor.tasks reported after Unregister")
	}
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRegisterMetricsNil checks the refusal of a nil actor.
func TestRegisterMetricsNil(t *testing.T) {
	if _, err := otelpgactor.RegisterMetrics(nil); err == nil {
		t.Error("RegisterMetrics(nil) succeeded")
	}
}
