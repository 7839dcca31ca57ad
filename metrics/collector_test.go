package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

var poolStats = actorpool.Stats{
	MaxObjects: 8, Total: 7, Idle: 2, InUse: 3, Creating: 1, Reserved: 1, Destroying: 1, Waiting: 4,
	Acquires: 100, EmptyAcquires: 11, Waits: 12, WaitDuration: 1500 * time.Millisecond,
	CanceledAcquires: 13, TimedOutAcquires: 14, ExhaustedAcquires: 15,
	CreateAttempts: 33, Created: 16, CreateErrors: 17, CreateTimeouts: 18, Tests: 19, Destroyed: 45,
	DestroyedBy: actorpool.DestroyCounts{Invalid: 1, Idle: 2, Lifetime: 3, TestFailed: 4, TestTimeout: 5,
		Leaked: 6, Reloaded: 7, Closed: 8, Discarded: 9},
	Hijacked: 22, Leaks: 20, SuspectedLeaks: 21,
}

var actorStats = actor.Stats{
	Submitted: 200, Rejected: 1, Dropped: 2, Completed: 150, Failed: 3, Panicked: 4, Retried: 5, DeadLettered: 6,
	Queued: 7, Retrying: 8, Running: 9, Blocked: 10, Workers: 11, Busy: 9, Idle: 2,
	OldestQueued: 250 * time.Millisecond,
}

// wantStats is every gauge and counter the collector reports for
// poolStats and actorStats: a test of each mapping and the list of names.
const wantStats = `
# HELP actorpool_actor_attempts_failed_total Handler attempts that failed: errors, timeouts, panics.
# TYPE actorpool_actor_attempts_failed_total counter
actorpool_actor_attempts_failed_total{actor="audit"} 3
# HELP actorpool_actor_blocked_sends Sends waiting for room in a full mailbox.
# TYPE actorpool_actor_blocked_sends gauge
actorpool_actor_blocked_sends{actor="audit"} 10
# HELP actorpool_actor_busy_workers Workers in a handler.
# TYPE actorpool_actor_busy_workers gauge
actorpool_actor_busy_workers{actor="audit"} 9
# HELP actorpool_actor_idle_workers Workers waiting for a task.
# TYPE actorpool_actor_idle_workers gauge
actorpool_actor_idle_workers{actor="audit"} 2
# HELP actorpool_actor_oldest_queued_seconds How long the task that has waited longest for a worker has waited.
# TYPE actorpool_actor_oldest_queued_seconds gauge
actorpool_actor_oldest_queued_seconds{actor="audit"} 0.25
# HELP actorpool_actor_panics_total Handler attempts that panicked or called runtime.Goexit; also counted as failed.
# TYPE actorpool_actor_panics_total counter
actorpool_actor_panics_total{actor="audit"} 4
# HELP actorpool_actor_queued_tasks Tasks waiting for a worker.
# TYPE actorpool_actor_queued_tasks gauge
actorpool_actor_queued_tasks{actor="audit"} 7
# HELP actorpool_actor_retries_total Retries scheduled.
# TYPE actorpool_actor_retries_total counter
actorpool_actor_retries_total{actor="audit"} 5
# HELP actorpool_actor_retrying_tasks Tasks waiting for their retry's backoff.
# TYPE actorpool_actor_retrying_tasks gauge
actorpool_actor_retrying_tasks{actor="audit"} 8
# HELP actorpool_actor_running_tasks Tasks in a handler.
# TYPE actorpool_actor_running_tasks gauge
actorpool_actor_running_tasks{actor="audit"} 9
# HELP actorpool_actor_tasks_completed_total Tasks whose handler succeeded.
# TYPE actorpool_actor_tasks_completed_total counter
actorpool_actor_tasks_completed_total{actor="audit"} 150
# HELP actorpool_actor_tasks_dead_lettered_total Accepted tasks handed to the dead letters.
# TYPE actorpool_actor_tasks_dead_lettered_total counter
actorpool_actor_tasks_dead_lettered_total{actor="audit"} 6
# HELP actorpool_actor_tasks_dropped_total Tasks dropped by the overflow policy; also counted as dead-lettered.
# TYPE actorpool_actor_tasks_dropped_total counter
actorpool_actor_tasks_dropped_total{actor="audit"} 2
# HELP actorpool_actor_tasks_rejected_total Tasks a send refused with an error (mailbox full, closed, sender's context ended).
# TYPE actorpool_actor_tasks_rejected_total counter
actorpool_actor_tasks_rejected_total{actor="audit"} 1
# HELP actorpool_actor_tasks_submitted_total Tasks offered by every send, accepted or not.
# TYPE actorpool_actor_tasks_submitted_total counter
actorpool_actor_tasks_submitted_total{actor="audit"} 200
# HELP actorpool_actor_workers Worker goroutines.
# TYPE actorpool_actor_workers gauge
actorpool_actor_workers{actor="audit"} 11
# HELP actorpool_pool_acquires_total Takes that got an object.
# TYPE actorpool_pool_acquires_total counter
actorpool_pool_acquires_total{pool="redis"} 100
# HELP actorpool_pool_canceled_acquires_total Queued takes whose context was canceled.
# TYPE actorpool_pool_canceled_acquires_total counter
actorpool_pool_canceled_acquires_total{pool="redis"} 13
# HELP actorpool_pool_create_attempts_total Factory.Create calls started.
# TYPE actorpool_pool_create_attempts_total counter
actorpool_pool_create_attempts_total{pool="redis"} 33
# HELP actorpool_pool_create_errors_total Creates that failed, panicked or timed out.
# TYPE actorpool_pool_create_errors_total counter
actorpool_pool_create_errors_total{pool="redis"} 17
# HELP actorpool_pool_create_timeouts_total Creates that outlived Config.CreateTimeout.
# TYPE actorpool_pool_create_timeouts_total counter
actorpool_pool_create_timeouts_total{pool="redis"} 18
# HELP actorpool_pool_created_total Objects created.
# TYPE actorpool_pool_created_total counter
actorpool_pool_created_total{pool="redis"} 16
# HELP actorpool_pool_creating_objects Creates in flight.
# TYPE actorpool_pool_creating_objects gauge
actorpool_pool_creating_objects{pool="redis"} 1
# HELP actorpool_pool_destroying_objects Of the reserved objects, those being destroyed or taken out by Lease.Hijack.
# TYPE actorpool_pool_destroying_objects gauge
actorpool_pool_destroying_objects{pool="redis"} 1
# HELP actorpool_pool_destroyed_total Objects destroyed, by reason: invalid, idle, lifetime, test_failed, test_timeout, leaked, reloaded, closed, discarded.
# TYPE actorpool_pool_destroyed_total counter
actorpool_pool_destroyed_total{pool="redis",reason="closed"} 8
actorpool_pool_destroyed_total{pool="redis",reason="discarded"} 9
actorpool_pool_destroyed_total{pool="redis",reason="idle"} 2
actorpool_pool_destroyed_total{pool="redis",reason="invalid"} 1
actorpool_pool_destroyed_total{pool="redis",reason="leaked"} 6
actorpool_pool_destroyed_total{pool="redis",reason="lifetime"} 3
actorpool_pool_destroyed_total{pool="redis",reason="reloaded"} 7
actorpool_pool_destroyed_total{pool="redis",reason="test_failed"} 4
actorpool_pool_destroyed_total{pool="redis",reason="test_timeout"} 5
# HELP actorpool_pool_empty_acquires_total Takes that found no idle object.
# TYPE actorpool_pool_empty_acquires_total counter
actorpool_pool_empty_acquires_total{pool="redis"} 11
# HELP actorpool_pool_exhausted_acquires_total Takes refused at once because Config.MaxQueueSize takes were already queued.
# TYPE actorpool_pool_exhausted_acquires_total counter
actorpool_pool_exhausted_acquires_total{pool="redis"} 15
# HELP actorpool_pool_hijacked_total Objects taken out of the pool by Lease.Hijack, never destroyed by it.
# TYPE actorpool_pool_hijacked_total counter
actorpool_pool_hijacked_total{pool="redis"} 22
# HELP actorpool_pool_idle_objects Objects ready to be taken.
# TYPE actorpool_pool_idle_objects gauge
actorpool_pool_idle_objects{pool="redis"} 2
# HELP actorpool_pool_in_use_objects Objects lent out.
# TYPE actorpool_pool_in_use_objects gauge
actorpool_pool_in_use_objects{pool="redis"} 3
# HELP actorpool_pool_leaks_total Leases found dropped, without being given back, by the garbage collector.
# TYPE actorpool_pool_leaks_total counter
actorpool_pool_leaks_total{pool="redis"} 20
# HELP actorpool_pool_max_objects Config.MaxObjects: the most objects the pool holds at once.
# TYPE actorpool_pool_max_objects gauge
actorpool_pool_max_objects{pool="redis"} 8
# HELP actorpool_pool_objects Objects alive or being created.
# TYPE actorpool_pool_objects gauge
actorpool_pool_objects{pool="redis"} 7
# HELP actorpool_pool_reserved_objects Objects held by the pool itself: under test, or being destroyed.
# TYPE actorpool_pool_reserved_objects gauge
actorpool_pool_reserved_objects{pool="redis"} 1
# HELP actorpool_pool_suspected_leaks_total Leases held longer than Config.LeakThreshold.
# TYPE actorpool_pool_suspected_leaks_total counter
actorpool_pool_suspected_leaks_total{pool="redis"} 21
# HELP actorpool_pool_tests_total Factory.Test calls that returned.
# TYPE actorpool_pool_tests_total counter
actorpool_pool_tests_total{pool="redis"} 19
# HELP actorpool_pool_timed_out_acquires_total Queued takes whose context's deadline passed.
# TYPE actorpool_pool_timed_out_acquires_total counter
actorpool_pool_timed_out_acquires_total{pool="redis"} 14
# HELP actorpool_pool_wait_duration_seconds_total Total time takes spent queued.
# TYPE actorpool_pool_wait_duration_seconds_total counter
actorpool_pool_wait_duration_seconds_total{pool="redis"} 1.5
# HELP actorpool_pool_waiting_takes Takes queued for an object now.
# TYPE actorpool_pool_waiting_takes gauge
actorpool_pool_waiting_takes{pool="redis"} 4
# HELP actorpool_pool_waits_total Takes that queued for an object.
# TYPE actorpool_pool_waits_total counter
actorpool_pool_waits_total{pool="redis"} 12
`

// statNames returns the names of the metrics read from Stats.
func statNames() []string {
	var names []string
	for _, m := range poolMetrics {
		names = append(names, m.Name)
	}
	names = append(names, "actorpool_pool_destroyed_total")
	for _, m := range actorMetrics {
		names = append(names, m.Name)
	}
	return names
}

// TestStats proves that every field of Stats reaches its own series, with
// the right type and value.
func TestStats(t *testing.T) {
	c := NewCollector(Options{})
	if err := c.AddPool("redis", func() actorpool.Stats { return poolStats }); err != nil {
		t.Fatal(err)
	}
	if err := c.AddActor("audit", func() actor.Stats { return actorStats }); err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(wantStats), statNames()...); err != nil {
		t.Error(err)
	}
	// Nothing reported is left out of the expectation above.
	if n, want := testutil.CollectAndCount(c, statNames()...), strings.Count(wantStats, `"} `); n != want {
		t.Errorf("the collector reports %d series from Stats, the test expects %d", n, want)
	}
}

// TestLint proves that every metric follows Prometheus's naming rules, as
// the client library's linter checks them, and that Describe and Collect
// agree, as a pedantic registry checks them.
func TestLint(t *testing.T) {
	c := NewCollector(Options{ConstLabels: prometheus.Labels{"service": "test"}})
	c.AddPool("redis", func() actorpool.Stats { return poolStats })
	c.AddActor("audit", func() actor.Stats { return actorStats })
	o := c.PoolObserver("redis")
	o.ObserveWait(time.Millisecond, nil)
	o.ObserveHold(time.Millisecond)
	o.ObserveCreate(time.Millisecond, errors.New("refused"))
	o.ObserveTest(time.Millisecond, nil)
	a := c.ActorObserver("audit")
	a.ObserveQueueWait(time.Millisecond)
	a.ObserveRun(time.Millisecond, nil)

	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if !hasLabel(m.GetLabel(), "service", "test") {
				t.Errorf("%s lacks the constant label service=test", f.GetName())
			}
		}
	}
}

// TestOpenMetricsFamilies proves that the families the collector reports
// keep distinct names in the OpenMetrics exposition, which promhttp
// serves with HandlerOpts.EnableOpenMetrics: there a counter's family is
// named without its _total, and the spec requires every family's name to
// be unique, so a counter named after a histogram plus _total clashes
// with it.
func TestOpenMetricsFamilies(t *testing.T) {
	c := NewCollector(Options{})
	c.AddPool("redis", func() actorpool.Stats { return poolStats })
	c.AddActor("audit", func() actor.Stats { return actorStats })
	o := c.PoolObserver("redis")
	o.ObserveWait(time.Millisecond, nil)
	o.ObserveHold(time.Millisecond)
	o.ObserveCreate(time.Millisecond, nil)
	o.ObserveTest(time.Millisecond, nil)
	a := c.ActorObserver("audit")
	a.ObserveQueueWait(time.Millisecond)
	a.ObserveRun(time.Millisecond, nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeOpenMetrics))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]string{}
	for line := range strings.Lines(b.String()) {
		name, typ, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "# TYPE "), " ")
		if !ok || !strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		if other, dup := seen[name]; dup {
			t.Errorf("OpenMetrics family %s is both a %s and a %s", name, other, typ)
		}
		seen[name] = typ
	}
}

func hasLabel[L interface {
	GetName() string
	GetValue() string
}](labels []L, name, value string) bool {
	for _, l := range labels {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestAddRemove proves that names are unique while added, and that
// removing a pool or an actor removes all its series, histograms included.
func TestAddRemove(t *testing.T) {
	c := NewCollector(Options{})
	stats := func() actorpool.Stats { return poolStats }
	if err := c.AddPool("a", stats); err != nil {
		t.Fatal(err)
	}
	if err := c.AddPool("a", stats); err == nil {
		t.Error("a second AddPool under the same name succeeded")
	}
	c.AddPool("b", stats)
	c.PoolObserver("a").ObserveHold(time.Second)
	c.PoolObserver("b").ObserveHold(time.Second)
	if err := c.AddActor("x", func() actor.Stats { return actorStats }); err != nil {
		t.Fatal(err)
	}
	if err := c.AddActor("x", func() actor.Stats { return actorStats }); err == nil {
		t.Error("a second AddActor under the same name succeeded")
	}
	c.ActorObserver("x").ObserveRun(time.Second, nil)

	perPool := len(poolMetrics) + len(destroyReasons)
	if n := testutil.CollectAndCount(c, "actorpool_pool_hold_seconds"); n != 2 {
		t.Errorf("%d hold histograms, want 2", n)
	}
	c.RemovePool("a")
	if n := testutil.CollectAndCount(c, statNames()...); n != perPool+len(actorMetrics) {
		t.Errorf("after RemovePool: %d series from Stats, want %d (pool b and actor x)", n, perPool+len(actorMetrics))
	}
	if n := testutil.CollectAndCount(c, "actorpool_pool_hold_seconds"); n != 1 {
		t.Errorf("after RemovePool: %d hold histograms, want 1", n)
	}
	c.RemoveActor("x")
	if n := testutil.CollectAndCount(c, "actorpool_actor_run_seconds", "actorpool_actor_workers"); n != 0 {
		t.Errorf("after RemoveActor: %d series of the actor left", n)
	}
	if err := c.AddPool("a", stats); err != nil {
		t.Errorf("AddPool after RemovePool: %v", err)
	}
}

// TestCollectWhileAdding proves, under the race detector, that scrapes may
// run while pools and actors come and go.
func TestCollectWhileAdding(t *testing.T) {
	c := NewCollector(Options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			testutil.CollectAndCount(c)
		}
	}()
	for range 50 {
		c.AddPool("p", func() actorpool.Stats { return poolStats })
		c.PoolObserver("p").ObserveHold(time.Millisecond)
		c.AddActor("a", func() actor.Stats { return actorStats })
		c.RemovePool("p")
		c.RemoveActor("a")
	}
	<-done
}

// TestPoolHistograms proves that a pool with a PoolObserver as its Observer
// feeds the four histograms with the times it measures. The pool runs in a
// synctest bubble, so the times are exact.
func TestPoolHistograms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCollector(Options{Buckets: []float64{1, 5}})
		creates := 0
		pool, err := actorpool.New(actorpool.FactoryFuncs[int]{
			CreateFunc: func(ctx context.Context) (int, error) {
				time.Sleep(2 * time.Second)
				creates++
				if creates == 2 {
					return 0, errors.New("refused")
				}
				return creates, nil
			},
			TestFunc: func(ctx context.Context, n int) error {
				time.Sleep(500 * time.Millisecond)
				return nil
			},
		}, actorpool.Config{MaxObjects: 1, ValidationInterval: time.Minute, Observer: c.PoolObserver("p")})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		l, err := pool.Acquire(ctx) // waits 2s for the first create
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		l.Destroy()                                  // held 3s
		if _, err := pool.Acquire(ctx); err == nil { // the second create fails after 2s
			t.Fatal("want the second create to fail")
		}
		time.Sleep(time.Second)    // past the create backoff
		l, err = pool.Acquire(ctx) // waits 2s for the third create
		if err != nil {
			t.Fatal(err)
		}
		l.Release() // held 0s
		time.Sleep(90 * time.Second)
		synctest.Wait() // the idle object has been tested, in 0.5s
		if err := pool.Close(ctx); err != nil {
			t.Fatal(err)
		}

		const want = `
# HELP actorpool_pool_create_seconds Time Factory.Create calls took, by result (ok or error).
# TYPE actorpool_pool_create_seconds histogram
actorpool_pool_create_seconds_bucket{pool="p",result="error",le="1"} 0
actorpool_pool_create_seconds_bucket{pool="p",result="error",le="5"} 1
actorpool_pool_create_seconds_bucket{pool="p",result="error",le="+Inf"} 1
actorpool_pool_create_seconds_sum{pool="p",result="error"} 2
actorpool_pool_create_seconds_count{pool="p",result="error"} 1
actorpool_pool_create_seconds_bucket{pool="p",result="ok",le="1"} 0
actorpool_pool_create_seconds_bucket{pool="p",result="ok",le="5"} 2
actorpool_pool_create_seconds_bucket{pool="p",result="ok",le="+Inf"} 2
actorpool_pool_create_seconds_sum{pool="p",result="ok"} 4
actorpool_pool_create_seconds_count{pool="p",result="ok"} 2
# HELP actorpool_pool_hold_seconds Time objects were held by callers, from the take to the give-back or destroy.
# TYPE actorpool_pool_hold_seconds histogram
actorpool_pool_hold_seconds_bucket{pool="p",le="1"} 1
actorpool_pool_hold_seconds_bucket{pool="p",le="5"} 2
actorpool_pool_hold_seconds_bucket{pool="p",le="+Inf"} 2
actorpool_pool_hold_seconds_sum{pool="p"} 3
actorpool_pool_hold_seconds_count{pool="p"} 2
# HELP actorpool_pool_test_seconds Time Factory.Test calls took, by result (ok or error).
# TYPE actorpool_pool_test_seconds histogram
actorpool_pool_test_seconds_bucket{pool="p",result="error",le="1"} 0
actorpool_pool_test_seconds_bucket{pool="p",result="error",le="5"} 0
actorpool_pool_test_seconds_bucket{pool="p",result="error",le="+Inf"} 0
actorpool_pool_test_seconds_sum{pool="p",result="error"} 0
actorpool_pool_test_seconds_count{pool="p",result="error"} 0
actorpool_pool_test_seconds_bucket{pool="p",result="ok",le="1"} 1
actorpool_pool_test_seconds_bucket{pool="p",result="ok",le="5"} 1
actorpool_pool_test_seconds_bucket{pool="p",result="ok",le="+Inf"} 1
actorpool_pool_test_seconds_sum{pool="p",result="ok"} 0.5
actorpool_pool_test_seconds_count{pool="p",result="ok"} 1
# HELP actorpool_pool_wait_seconds Time takes spent queued for an object, by how the wait ended (result: ok or error). Takes that found an idle object did not queue and are not counted.
# TYPE actorpool_pool_wait_seconds histogram
actorpool_pool_wait_seconds_bucket{pool="p",result="error",le="1"} 0
actorpool_pool_wait_seconds_bucket{pool="p",result="error",le="5"} 1
actorpool_pool_wait_seconds_bucket{pool="p",result="error",le="+Inf"} 1
actorpool_pool_wait_seconds_sum{pool="p",result="error"} 2
actorpool_pool_wait_seconds_count{pool="p",result="error"} 1
actorpool_pool_wait_seconds_bucket{pool="p",result="ok",le="1"} 0
actorpool_pool_wait_seconds_bucket{pool="p",result="ok",le="5"} 2
actorpool_pool_wait_seconds_bucket{pool="p",result="ok",le="+Inf"} 2
actorpool_pool_wait_seconds_sum{pool="p",result="ok"} 4
actorpool_pool_wait_seconds_count{pool="p",result="ok"} 2
`
		if err := testutil.CollectAndCompare(c, strings.NewReader(want),
			"actorpool_pool_create_seconds", "actorpool_pool_hold_seconds",
			"actorpool_pool_test_seconds", "actorpool_pool_wait_seconds"); err != nil {
			t.Error(err)
		}
	})
}

// TestInstrumentHandler proves that a wrapped handler feeds the queue wait
// and run time histograms, with failures and panics counted as errors.
func TestInstrumentHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCollector(Options{Buckets: []float64{1, 5}})
		h := func(ctx context.Context, task actor.Task[string]) error {
			time.Sleep(2 * time.Second)
			switch task.Payload {
			case "fail":
				return errors.New("failed")
			case "panic":
				panic("boom")
			}
			return nil
		}
		a, err := actor.New("audit", InstrumentHandler(c.ActorObserver("audit"), h), actor.Config[string]{
			OnError:     func(*actor.TaskError) {},
			DeadLetters: actor.NewRingSink[string](8),
		})
		if err != nil {
			t.Fatal(err)
		}
		// One worker: the tasks wait 0s, 2s and 4s for it.
		for _, p := range []string{"ok", "fail", "panic"} {
			if err := a.Send(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		const want = `
# HELP actorpool_actor_queue_wait_seconds Time tasks waited in the mailbox before a worker started them, counted at each attempt.
# TYPE actorpool_actor_queue_wait_seconds histogram
actorpool_actor_queue_wait_seconds_bucket{actor="audit",le="1"} 1
actorpool_actor_queue_wait_seconds_bucket{actor="audit",le="5"} 3
actorpool_actor_queue_wait_seconds_bucket{actor="audit",le="+Inf"} 3
actorpool_actor_queue_wait_seconds_sum{actor="audit"} 6
actorpool_actor_queue_wait_seconds_count{actor="audit"} 3
# HELP actorpool_actor_run_seconds Time handler attempts took, by result (ok or error).
# TYPE actorpool_actor_run_seconds histogram
actorpool_actor_run_seconds_bucket{actor="audit",result="error",le="1"} 0
actorpool_actor_run_seconds_bucket{actor="audit",result="error",le="5"} 2
actorpool_actor_run_seconds_bucket{actor="audit",result="error",le="+Inf"} 2
actorpool_actor_run_seconds_sum{actor="audit",result="error"} 4
actorpool_actor_run_seconds_count{actor="audit",result="error"} 2
actorpool_actor_run_seconds_bucket{actor="audit",result="ok",le="1"} 0
actorpool_actor_run_seconds_bucket{actor="audit",result="ok",le="5"} 1
actorpool_actor_run_seconds_bucket{actor="audit",result="ok",le="+Inf"} 1
actorpool_actor_run_seconds_sum{actor="audit",result="ok"} 2
actorpool_actor_run_seconds_count{actor="audit",result="ok"} 1
`
		if err := testutil.CollectAndCompare(c, strings.NewReader(want),
			"actorpool_actor_queue_wait_seconds", "actorpool_actor_run_seconds"); err != nil {
			t.Error(err)
		}
	})
}
