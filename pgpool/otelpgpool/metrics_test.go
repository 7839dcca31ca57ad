package otelpgpool_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/actorpool/actorpool/pgpool/otelpgpool"
)

// series is one collected data point: its instrument, attributes other
// than the pool's name, value, and whether its sum is monotonic.
type series struct {
	value     float64
	monotonic bool
	unit      string
}

// collect reads every series the reader reports, keyed by instrument name
// and the attributes other than the pool name, which it checks.
func collect(t testing.TB, r *sdkmetric.ManualReader) map[string]series {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]series{}
	add := func(name string, attrs attribute.Set, v float64, monotonic bool, unit string) {
		if pool, _ := attrs.Value("db.client.connection.pool.name"); pool.AsString() != testPoolName {
			t.Errorf("%s%v: db.client.connection.pool.name = %q, want %q", name, attrs.ToSlice(), pool.Emit(), testPoolName)
		}
		var rest []string
		for _, kv := range attrs.ToSlice() {
			if kv.Key != "db.client.connection.pool.name" {
				rest = append(rest, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
			}
		}
		sort.Strings(rest)
		key := name
		if len(rest) > 0 {
			key += "{" + strings.Join(rest, ",") + "}"
		}
		got[key] = series{value: v, monotonic: monotonic, unit: unit}
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelpgpool.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, otelpgpool.ScopeName)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, float64(dp.Value), d.IsMonotonic, m.Unit)
				}
			case metricdata.Sum[float64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, dp.Value, d.IsMonotonic, m.Unit)
				}
			default:
				t.Errorf("%s is a %T, want a sum", m.Name, m.Data)
			}
		}
	}
	return got
}

// wantSeries is every series RegisterMetrics reports, read from st: the
// test's own statement of the mapping.
func wantSeries(st actorpool.Stats, minIdle int) map[string]series {
	gauge := func(v int, unit string) series { return series{value: float64(v), unit: unit} }
	counter := func(v int64, unit string) series { return series{value: float64(v), monotonic: true, unit: unit} }
	d := st.DestroyedBy
	return map[string]series{
		"db.client.connection.count{db.client.connection.state=idle}": gauge(st.Idle+st.Reserved-st.Destroying, "{connection}"),
		"db.client.connection.count{db.client.connection.state=used}": gauge(st.InUse, "{connection}"),
		"db.client.connection.max":                                    gauge(st.MaxObjects, "{connection}"),
		"db.client.connection.idle.min":                               gauge(minIdle, "{connection}"),
		"db.client.connection.pending_requests":                       gauge(st.Waiting, "{request}"),
		"db.client.connection.timeouts":                               counter(st.TimedOutAcquires, "{timeout}"),

		"actorpool.pool.creating":   gauge(st.Creating, "{connection}"),
		"actorpool.pool.destroying": gauge(st.Destroying, "{connection}"),

		"actorpool.pool.acquires":           counter(st.Acquires, "{acquire}"),
		"actorpool.pool.empty_acquires":     counter(st.EmptyAcquires, "{acquire}"),
		"actorpool.pool.waits":              counter(st.Waits, "{acquire}"),
		"actorpool.pool.wait_time":          {value: st.WaitDuration.Seconds(), monotonic: true, unit: "s"},
		"actorpool.pool.canceled_acquires":  counter(st.CanceledAcquires, "{acquire}"),
		"actorpool.pool.exhausted_acquires": counter(st.ExhaustedAcquires, "{acquire}"),
		"actorpool.pool.create_attempts":    counter(st.CreateAttempts, "{connection}"),
		"actorpool.pool.created":            counter(st.Created, "{connection}"),
		"actorpool.pool.create_errors":      counter(st.CreateErrors, "{error}"),
		"actorpool.pool.create_timeouts":    counter(st.CreateTimeouts, "{timeout}"),
		"actorpool.pool.tests":              counter(st.Tests, "{test}"),
		"actorpool.pool.hijacked":           counter(st.Hijacked, "{connection}"),
		"actorpool.pool.leaks":              counter(st.Leaks, "{connection}"),
		"actorpool.pool.suspected_leaks":    counter(st.SuspectedLeaks, "{connection}"),

		"actorpool.pool.destroyed{actorpool.destroy.reason=invalid}":      counter(d.Invalid, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=idle}":         counter(d.Idle, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=lifetime}":     counter(d.Lifetime, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=test_failed}":  counter(d.TestFailed, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=test_timeout}": counter(d.TestTimeout, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=leaked}":       counter(d.Leaked, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=reloaded}":     counter(d.Reloaded, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=closed}":       counter(d.Closed, "{connection}"),
		"actorpool.pool.destroyed{actorpool.destroy.reason=discarded}":    counter(d.Discarded, "{connection}"),
	}
}

// collectStill collects when the pool's Stats are the same before and
// after the collection, so that the one snapshot the collection read is
// known, and returns both.
func collectStill(t testing.TB, r *sdkmetric.ManualReader, p *pgpool.Pool) (map[string]series, actorpool.Stats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		before := p.Stats()
		got := collect(t, r)
		if p.Stats() == before {
			return got, before
		}
		if time.Now().After(deadline) {
			t.Fatal("the pool's Stats kept changing: no collection could be checked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMetricsMatchStats drives a pool through takes that wait, are
// canceled, time out, a connection closed by its holder, a Hijack and a
// Reset, and checks that every series reports what Stats says, with one
// take still queued.
func TestMetricsMatchStats(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	const maxConns, minIdle = 3, 1
	p := newPool(t, nil, func(c *pgpool.Config) { c.MaxConns = maxConns; c.MinIdleConns = minIdle })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	reg, err := otelpgpool.RegisterMetrics(mp.Meter(otelpgpool.ScopeName), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	var held []*pgpool.Conn
	take := func() {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for range maxConns {
		take()
	}
	// A take that queues and is canceled, and one that times out.
	canceled, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := p.Acquire(canceled); done <- err }()
	waitForWaiters(t, p, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled take: %v", err)
	}
	timed, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	if _, err := p.Acquire(timed); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out take: %v", err)
	}
	stop()
	// A connection closed by its holder is destroyed when given back; a
	// hijacked one leaves the pool; Reset closes the idle ones.
	held[0].Conn().Close(ctx)
	held[0].Release()
	held[1].Hijack().Close(ctx)
	held = held[2:]
	testenv.Eventually(t, 10*time.Second, "the idle connection MinIdleConns asks for", func() bool { return p.Stats().Idle >= minIdle })
	p.Reset()
	// Every connection in use, and one take queued for one.
	for len(held) < maxConns {
		take()
	}
	queued, unqueue := context.WithCancel(ctx)
	go func() { _, err := p.Acquire(queued); done <- err }()
	waitForWaiters(t, p, 1)

	got, st := collectStill(t, reader, p)
	want := wantSeries(st, minIdle)
	for key, w := range want {
		if g, ok := got[key]; !ok {
			t.Errorf("%s: not reported", key)
		} else if g != w {
			t.Errorf("%s = %+v, want %+v", key, g, w)
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("%s: reported, but not in the test's list", key)
		}
	}
	if st.Waits < 3 || st.CanceledAcquires != 1 || st.TimedOutAcquires != 1 || st.Hijacked != 1 ||
		st.DestroyedBy.Reloaded == 0 || st.Destroyed < 2 || st.InUse != maxConns || st.Waiting != 1 {
		t.Errorf("the test did not drive the pool as it meant to: %+v", st)
	}

	unqueue()
	<-done
	for _, c := range held {
		c.Release()
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("after Unregister, %d series are still reported", len(got))
	}
}

// TestRegisterMetricsErrors checks that RegisterMetrics refuses what it
// cannot use, saying what was wrong.
func TestRegisterMetricsErrors(t *testing.T) {
	testenv.Postgres(t)
	p := newPool(t, nil, nil)
	tests := []struct {
		name  string
		meter metric.Meter
		pool  *pgpool.Pool
	}{
		{"no meter", nil, p},
		{"no pool", noop.NewMeterProvider().Meter("test"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := otelpgpool.RegisterMetrics(tt.meter, tt.pool)
			if err == nil || reg != nil || !strings.Contains(err.Error(), "needs a meter and a pool") {
				t.Errorf("RegisterMetrics = %v, %v; want an error saying it needs a meter and a pool", reg, err)
			}
		})
	}
}

// TestMetricsConcurrent collects while goroutines take and give back, for
// the race detector.
func TestMetricsConcurrent(t *testing.T) {
	testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	p := newPool(t, nil, func(c *pgpool.Config) { c.MaxConns = 2 })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	reg, err := otelpgpool.RegisterMetrics(mp.Meter(otelpgpool.ScopeName), p)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	stop := make(chan struct{})
	collected := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				collected <- n
				return
			default:
				var rm metricdata.ResourceMetrics
				if err := reader.Collect(context.Background(), &rm); err != nil {
					t.Error(err)
				}
				n++
			}
		}
	}()
	const takes = 100
	for range takes {
		if _, err := p.Exec(context.Background(), "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-collected
	if got := collect(t, reader)["actorpool.pool.acquires"].value; got != takes {
		t.Errorf("actorpool.pool.acquires = %v, want %d", got, takes)
	}
}
