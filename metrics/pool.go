package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/metrics/internal/series"
)

// poolMetrics are the gauges and counters read from a pool's Stats.
var poolMetrics = []series.Series[actorpool.Stats]{
	series.Gauge("actorpool_pool_max_objects", "Config.MaxObjects: the most objects the pool holds at once.",
		func(s actorpool.Stats) int64 { return int64(s.MaxObjects) }),
	series.Gauge("actorpool_pool_objects", "Objects alive or being created.",
		func(s actorpool.Stats) int64 { return int64(s.Total) }),
	series.Gauge("actorpool_pool_idle_objects", "Objects ready to be taken.",
		func(s actorpool.Stats) int64 { return int64(s.Idle) }),
	series.Gauge("actorpool_pool_in_use_objects", "Objects lent out.",
		func(s actorpool.Stats) int64 { return int64(s.InUse) }),
	series.Gauge("actorpool_pool_creating_objects", "Creates in flight.",
		func(s actorpool.Stats) int64 { return int64(s.Creating) }),
	series.Gauge("actorpool_pool_reserved_objects", "Objects held by the pool itself: under test, or being destroyed.",
		func(s actorpool.Stats) int64 { return int64(s.Reserved) }),
	series.Gauge("actorpool_pool_destroying_objects", "Of the reserved objects, those being destroyed or taken out by Lease.Hijack.",
		func(s actorpool.Stats) int64 { return int64(s.Destroying) }),
	series.Gauge("actorpool_pool_waiting_takes", "Takes queued for an object now.",
		func(s actorpool.Stats) int64 { return int64(s.Waiting) }),

	series.Counter("actorpool_pool_acquires_total", "Takes that got an object.",
		func(s actorpool.Stats) int64 { return s.Acquires }),
	series.Counter("actorpool_pool_empty_acquires_total", "Takes that found no idle object.",
		func(s actorpool.Stats) int64 { return s.EmptyAcquires }),
	series.Counter("actorpool_pool_waits_total", "Takes that queued for an object.",
		func(s actorpool.Stats) int64 { return s.Waits }),
	series.CounterSeconds("actorpool_pool_wait_duration_seconds_total", "Total time takes spent queued.",
		func(s actorpool.Stats) time.Duration { return s.WaitDuration }),
	series.Counter("actorpool_pool_canceled_acquires_total", "Queued takes whose context was canceled.",
		func(s actorpool.Stats) int64 { return s.CanceledAcquires }),
	series.Counter("actorpool_pool_timed_out_acquires_total", "Queued takes whose context's deadline passed.",
		func(s actorpool.Stats) int64 { return s.TimedOutAcquires }),
	series.Counter("actorpool_pool_exhausted_acquires_total", "Takes refused at once because Config.MaxQueueSize takes were already queued.",
		func(s actorpool.Stats) int64 { return s.ExhaustedAcquires }),

	series.Counter("actorpool_pool_create_attempts_total", "Factory.Create calls started.",
		func(s actorpool.Stats) int64 { return s.CreateAttempts }),
	series.Counter("actorpool_pool_created_total", "Objects created.",
		func(s actorpool.Stats) int64 { return s.Created }),
	series.Counter("actorpool_pool_create_errors_total", "Creates that failed, panicked or timed out.",
		func(s actorpool.Stats) int64 { return s.CreateErrors }),
	series.Counter("actorpool_pool_create_timeouts_total", "Creates that outlived Config.CreateTimeout.",
		func(s actorpool.Stats) int64 { return s.CreateTimeouts }),
	series.Counter("actorpool_pool_tests_total", "Factory.Test calls that returned.",
		func(s actorpool.Stats) int64 { return s.Tests }),
	// Without it, an object taken out by Lease.Hijack would leave the
	// objects gauge with no counter to say where it went.
	series.Counter("actorpool_pool_hijacked_total", "Objects taken out of the pool by Lease.Hijack, never destroyed by it.",
		func(s actorpool.Stats) int64 { return s.Hijacked }),
	series.Counter("actorpool_pool_leaks_total", "Leases found dropped, without being given back, by the garbage collector.",
		func(s actorpool.Stats) int64 { return s.Leaks }),
	series.Counter("actorpool_pool_suspected_leaks_total", "Leases held longer than Config.LeakThreshold.",
		func(s actorpool.Stats) int64 { return s.SuspectedLeaks }),
}

// destroyReasons are the values of the "reason" label of
// actorpool_pool_destroyed_total, one per field of DestroyCounts.
var destroyReasons = []struct {
	name  string
	count func(actorpool.DestroyCounts) int64
}{
	{"invalid", func(d actorpool.DestroyCounts) int64 { return d.Invalid }},
	{"idle", func(d actorpool.DestroyCounts) int64 { return d.Idle }},
	{"lifetime", func(d actorpool.DestroyCounts) int64 { return d.Lifetime }},
	{"test_failed", func(d actorpool.DestroyCounts) int64 { return d.TestFailed }},
	{"test_timeout", func(d actorpool.DestroyCounts) int64 { return d.TestTimeout }},
	{"leaked", func(d actorpool.DestroyCounts) int64 { return d.Leaked }},
	{"reloaded", func(d actorpool.DestroyCounts) int64 { return d.Reloaded }},
	{"closed", func(d actorpool.DestroyCounts) int64 { return d.Closed }},
	{"discarded", func(d actorpool.DestroyCounts) int64 { return d.Discarded }},
}

// A PoolObserver feeds one pool's histograms. It is an actorpool.Observer:
// set it as the pool's Config.Observer.
type PoolObserver struct {
	waitOK, waitErr     prometheus.Observer
	hold                prometheus.Observer
	createOK, createErr prometheus.Observer
	testOK, testErr     prometheus.Observer
}

var _ actorpool.Observer = (*PoolObserver)(nil)

// PoolObserver returns the observer that feeds the histograms of the pool
// name. Every call with the same name feeds the same series.
func (c *Collector) PoolObserver(name string) *PoolObserver {
	return &PoolObserver{
		waitOK:    c.poolWait.WithLabelValues(name, "ok"),
		waitErr:   c.poolWait.WithLabelValues(name, "error"),
		hold:      c.poolHold.WithLabelValues(name),
		createOK:  c.poolCreate.WithLabelValues(name, "ok"),
		createErr: c.poolCreate.WithLabelValues(name, "error"),
		testOK:    c.poolTest.WithLabelValues(name, "ok"),
		testErr:   c.poolTest.WithLabelValues(name, "error"),
	}
}

// ObserveWait records a take that queued for d and then got an object (err
// nil) or failed.
func (o *PoolObserver) ObserveWait(d time.Duration, err error) {
	pick(o.waitOK, o.waitErr, err).Observe(d.Seconds())
}

// ObserveHold records a lease held for d.
func (o *PoolObserver) ObserveHold(d time.Duration) { o.hold.Observe(d.Seconds()) }

// ObserveCreate records a Factory.Create call that took d.
func (o *PoolObserver) ObserveCreate(d time.Duration, err error) {
	pick(o.createOK, o.createErr, err).Observe(d.Seconds())
}

// ObserveTest records a Factory.Test call that took d.
func (o *PoolObserver) ObserveTest(d time.Duration, err error) {
	pick(o.testOK, o.testErr, err).Observe(d.Seconds())
}

func pick(ok, failed prometheus.Observer, err error) prometheus.Observer {
	if err != nil {
		return failed
	}
	return ok
}
