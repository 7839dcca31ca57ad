package otelpgpool

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/dbconv"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/pgpool"
)

// DestroyReasonKey is the attribute of actorpool.pool.destroyed that says
// why connections were closed: invalid, idle, lifetime, test_failed,
// test_timeout, leaked, reloaded, closed or discarded, one value per field
// of actorpool.DestroyCounts, as the metrics package's reason label.
const DestroyReasonKey = attribute.Key("actorpool.destroy.reason")

// A gauge or counter read from Stats, with the attributes of its one
// series.
type int64Stat struct {
	inst  metric.Int64Observable
	value func(*actorpool.Stats) int64
	attrs metric.ObserveOption
}

// RegisterMetrics reports pool's Stats on meter, which should be named
// ScopeName: a callback reads Stats once per collection and observes
// every instrument from that one snapshot. The package documentation
// lists the instruments. Unregister the returned Registration when the
// pool is closed.
func RegisterMetrics(meter metric.Meter, pool *pgpool.Pool) (metric.Registration, error) {
	if meter == nil || pool == nil {
		return nil, errors.New("otelpgpool: RegisterMetrics needs a meter and a pool; got nil")
	}
	cfg := pool.Config()
	name := semconv.DBClientConnectionPoolName(poolName(cfg))
	pooled := metric.WithAttributeSet(attribute.NewSet(name))
	with := func(kv attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(name, kv))
	}
	minIdle := int64(cfg.MinIdleConns)

	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var stats []int64Stat
	stat := func(inst metric.Int64Observable, err error, attrs metric.ObserveOption, value func(*actorpool.Stats) int64) {
		check(err)
		stats = append(stats, int64Stat{inst: inst, value: value, attrs: attrs})
	}
	semGauge := func(inst metric.Int64Observable, err error, value func(*actorpool.Stats) int64) {
		stat(inst, err, pooled, value)
	}

	count, err := dbconv.NewClientConnectionCountObservable(meter)
	stat(count.Inst(), err, with(semconv.DBClientConnectionStateIdle),
		func(s *actorpool.Stats) int64 { return int64(s.Idle + s.Reserved - s.Destroying) })
	stat(count.Inst(), nil, with(semconv.DBClientConnectionStateUsed),
		func(s *actorpool.Stats) int64 { return int64(s.InUse) })
	maxConns, err := dbconv.NewClientConnectionMaxObservable(meter)
	semGauge(maxConns.Inst(), err, func(s *actorpool.Stats) int64 { return int64(s.MaxObjects) })
	idleMin, err := dbconv.NewClientConnectionIdleMinObservable(meter)
	semGauge(idleMin.Inst(), err, func(*actorpool.Stats) int64 { return minIdle })
	pending, err := dbconv.NewClientConnectionPendingRequestsObservable(meter)
	semGauge(pending.Inst(), err, func(s *actorpool.Stats) int64 { return int64(s.Waiting) })
	timeouts, err := dbconv.NewClientConnectionTimeoutsObservable(meter)
	semGauge(timeouts.Inst(), err, func(s *actorpool.Stats) int64 { return s.TimedOutAcquires })

	for _, m := range extraGauges {
		inst, err := meter.Int64ObservableUpDownCounter(m.name, metric.WithDescription(m.desc), metric.WithUnit(m.unit))
		stat(inst, err, pooled, m.value)
	}
	for _, m := range extraCounters {
		inst, err := meter.Int64ObservableCounter(m.name, metric.WithDescription(m.desc), metric.WithUnit(m.unit))
		stat(inst, err, pooled, m.value)
	}
	destroyed, err := meter.Int64ObservableCounter("actorpool.pool.destroyed",
		metric.WithDescription("Connections closed, by why they were closed."), metric.WithUnit("{connection}"))
	for _, r := range destroyReasons {
		stat(destroyed, err, with(DestroyReasonKey.String(r.name)), r.count)
	}
	waitTime, err := meter.Float64ObservableCounter("actorpool.pool.wait_time",
		metric.WithDescription("Total time takes spent queued for a connection."), metric.WithUnit("s"))
	check(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otelpgpool: making the pool's instruments: %w", err)
	}

	insts := []metric.Observable{waitTime}
	for i, s := range stats {
		if i == 0 || s.inst != stats[i-1].inst {
			insts = append(insts, s.inst)
		}
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := pool.Stats()
		for _, s := range stats {
			o.ObserveInt64(s.inst, s.value(&st), s.attrs)
		}
		o.ObserveFloat64(waitTime, st.WaitDuration.Seconds(), pooled)
		return nil
	}, insts...)
	if err != nil {
		return nil, fmt.Errorf("otelpgpool: registering the pool's metrics callback: %w", err)
	}
	return reg, nil
}

// A statMetric is an instrument with no semantic convention, named as the
// metrics package names it for Prometheus.
type statMetric struct {
	name, unit, desc string
	value            func(*actorpool.Stats) int64
}

var extraGauges = []statMetric{
	{"actorpool.pool.creating", "{connection}", "Connects in flight.",
		func(s *actorpool.Stats) int64 { return int64(s.Creating) }},
	{"actorpool.pool.destroying", "{connection}", "Connections being closed, or taken out of the pool by Hijack.",
		func(s *actorpool.Stats) int64 { return int64(s.Destroying) }},
}

var extraCounters = []statMetric{
	{"actorpool.pool.acquires", "{acquire}", "Takes that got a connection.",
		func(s *actorpool.Stats) int64 { return s.Acquires }},
	{"actorpool.pool.empty_acquires", "{acquire}", "Takes that found no idle connection.",
		func(s *actorpool.Stats) int64 { return s.EmptyAcquires }},
	{"actorpool.pool.waits", "{acquire}", "Takes that queued for a connection.",
		func(s *actorpool.Stats) int64 { return s.Waits }},
	{"actorpool.pool.canceled_acquires", "{acquire}", "Queued takes whose context was canceled.",
		func(s *actorpool.Stats) int64 { return s.CanceledAcquires }},
	{"actorpool.pool.exhausted_acquires", "{acquire}", "Takes refused at once because Config.Pool.MaxQueueSize takes were already queued.",
		func(s *actorpool.Stats) int64 { return s.ExhaustedAcquires }},
	{"actorpool.pool.create_attempts", "{connection}", "Connects started.",
		func(s *actorpool.Stats) int64 { return s.CreateAttempts }},
	{"actorpool.pool.created", "{connection}", "Connections made.",
		func(s *actorpool.Stats) int64 { return s.Created }},
	{"actorpool.pool.create_errors", "{error}", "Connects that failed, panicked or timed out.",
		func(s *actorpool.Stats) int64 { return s.CreateErrors }},
	{"actorpool.pool.create_timeouts", "{timeout}", "Connects that outlived Config.Pool.CreateTimeout.",
		func(s *actorpool.Stats) int64 { return s.CreateTimeouts }},
	{"actorpool.pool.tests", "{test}", "Health-check pings that returned.",
		func(s *actorpool.Stats) int64 { return s.Tests }},
	{"actorpool.pool.hijacked", "{connection}", "Connections taken out of the pool by Conn.Hijack.",
		func(s *actorpool.Stats) int64 { return s.Hijacked }},
	{"actorpool.pool.leaks", "{connection}", "Connections found dropped, without being given back, by the garbage collector.",
		func(s *actorpool.Stats) int64 { return s.Leaks }},
	{"actorpool.pool.suspected_leaks", "{connection}", "Connections held longer than Config.Pool.LeakThreshold.",
		func(s *actorpool.Stats) int64 { return s.SuspectedLeaks }},
}

// destroyReasons are the values of DestroyReasonKey, one per field of
// actorpool.DestroyCounts, as the metrics package names them.
var destroyReasons = []struct {
	name  string
	count func(*actorpool.Stats) int64
}{
	{"invalid", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Invalid }},
	{"idle", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Idle }},
	{"lifetime", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Lifetime }},
	{"test_failed", func(s *actorpool.Stats) int64 { return s.DestroyedBy.TestFailed }},
	{"test_timeout", func(s *actorpool.Stats) int64 { return s.DestroyedBy.TestTimeout }},
	{"leaked", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Leaked }},
	{"reloaded", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Reloaded }},
	{"closed", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Closed }},
	{"discarded", func(s *actorpool.Stats) int64 { return s.DestroyedBy.Discarded }},
}
