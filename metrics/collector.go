package metrics

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/metrics/internal/series"
)

// DefaultBuckets are the upper bounds, in seconds, of the histograms'
// buckets when Options.Buckets is nil: 10µs to 10s in steps of 1, 2.5 and
// 5, which spans an idle take (microseconds) to a stalled create (seconds).
var DefaultBuckets = []float64{
	0.00001, 0.000025, 0.00005,
	0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1, 2.5, 5, 10,
}

// Options shape a Collector. The zero value is ready to use.
type Options struct {
	// Buckets are the upper bounds, in seconds, of every histogram's
	// buckets, in increasing order. Nil or empty means DefaultBuckets.
	Buckets []float64
	// ConstLabels are added to every series, such as {"service": "api"}.
	ConstLabels prometheus.Labels
}

// A Collector is a prometheus.Collector for pools and actors. It is safe for
// concurrent use: pools and actors may be added and removed while it is
// scraped.
type Collector struct {
	mu     sync.Mutex
	pools  map[string]func() actorpool.Stats
	actors map[string]func() actor.Stats

	poolDescs  []series.Described[actorpool.Stats]
	actorDescs []series.Described[actor.Stats]
	destroyed  *prometheus.Desc

	poolWait, poolHold, poolCreate, poolTest *prometheus.HistogramVec
	actorQueueWait, actorRun                 *prometheus.HistogramVec
}

// NewCollector returns a Collector with no pools and no actors.
func NewCollector(opts Options) *Collector {
	buckets := opts.Buckets
	if len(buckets) == 0 { // the client library would give empty ones a default of its own
		buckets = DefaultBuckets
	}
	hist := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name, Help: help, Buckets: buckets, ConstLabels: opts.ConstLabels,
		}, labels)
	}
	c := &Collector{
		pools:  map[string]func() actorpool.Stats{},
		actors: map[string]func() actor.Stats{},

		poolWait: hist("actorpool_pool_wait_seconds",
			"Time takes spent queued for an object, by how the wait ended (result: ok or error). Takes that found an idle object did not queue and are not counted.",
			"pool", "result"),
		poolHold: hist("actorpool_pool_hold_seconds",
			"Time objects were held by callers, from the take to the give-back or destroy.",
			"pool"),
		poolCreate: hist("actorpool_pool_create_seconds",
			"Time Factory.Create calls took, by result (ok or error).",
			"pool", "result"),
		poolTest: hist("actorpool_pool_test_seconds",
			"Time Factory.Test calls took, by result (ok or error).",
			"pool", "result"),
		actorQueueWait: hist("actorpool_actor_queue_wait_seconds",
			"Time tasks waited in the mailbox before a worker started them, counted at each attempt.",
			"actor"),
		actorRun: hist("actorpool_actor_run_seconds",
			"Time handler attempts took, by result (ok or error).",
			"actor", "result"),
	}
	c.poolDescs = series.Describe(poolMetrics, []string{"pool"}, opts.ConstLabels)
	c.destroyed = prometheus.NewDesc("actorpool_pool_destroyed_total",
		"Objects destroyed, by reason: invalid, idle, lifetime, test_failed, test_timeout, leaked, reloaded, closed, discarded.",
		[]string{"pool", "reason"}, opts.ConstLabels)
	c.actorDescs = series.Describe(actorMetrics, []string{"actor"}, opts.ConstLabels)
	return c
}

// AddPool has the collector report the gauges and counters that stats
// returns, usually a pool's Stats method, under the label pool=name. It
// fails if name is empty, stats is nil, or a pool of that name was added
// and not removed.
func (c *Collector) AddPool(name string, stats func() actorpool.Stats) error {
	return add(c, c.pools, "a pool", name, stats)
}

// RemovePool stops reporting the pool name, its histograms included, so
// that a closed pool's series disappear.
func (c *Collector) RemovePool(name string) {
	remove(c, c.pools, "pool", name, c.poolWait, c.poolHold, c.poolCreate, c.poolTest)
}

// AddActor has the collector report the gauges and counters that stats
// returns, usually an actor's Stats method, under the label actor=name. It
// fails if name is empty, stats is nil, or an actor of that name was added
// and not removed.
func (c *Collector) AddActor(name string, stats func() actor.Stats) error {
	return add(c, c.actors, "an actor", name, stats)
}

// RemoveActor stops reporting the actor name, its histograms included.
func (c *Collector) RemoveActor(name string) {
	remove(c, c.actors, "actor", name, c.actorQueueWait, c.actorRun)
}

// add puts stats in sources, a map of c's, under name, unless a source of
// that name is there; what says what stats is of, for the error.
func add[S any](c *Collector, sources map[string]func() S, what, name string, stats func() S) error {
	// Refused here, where the mistake is made: a nil func would panic in
	// every scrape, losing the series of the others with it, and an empty
	// label value is, to Prometheus, no label at all.
	if name == "" {
		return fmt.Errorf("metrics: %s needs a name: it is the label of its series", what)
	}
	if stats == nil {
		return fmt.Errorf("metrics: %s named %q has a nil Stats func", what, name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := sources[name]; ok {
		return fmt.Errorf("metrics: %s named %q is already added; remove it first or choose another name", what, name)
	}
	sources[name] = stats
	return nil
}

// remove takes name out of sources, a map of c's, and its series, labelled
// label=name, out of the histograms hs.
func remove[S any](c *Collector, sources map[string]func() S, label, name string, hs ...*prometheus.HistogramVec) {
	c.mu.Lock()
	delete(sources, name)
	c.mu.Unlock()
	for _, h := range hs {
		h.DeletePartialMatch(prometheus.Labels{label: name})
	}
}

// Describe sends the descriptions of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.poolDescs {
		ch <- m.Desc
	}
	ch <- c.destroyed
	for _, m := range c.actorDescs {
		ch <- m.Desc
	}
	for _, h := range c.histograms() {
		h.Describe(ch)
	}
}

// Collect reads the Stats of every pool and actor added, and sends them
// with the histograms.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	pools, actors := maps.Clone(c.pools), maps.Clone(c.actors)
	c.mu.Unlock()

	// Stats are read outside the lock: a slow one must not hold up
	// AddPool and RemovePool.
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		st := pools[name]()
		for _, m := range c.poolDescs {
			ch <- m.Metric(st, name)
		}
		for _, r := range destroyReasons {
			ch <- prometheus.MustNewConstMetric(c.destroyed, prometheus.CounterValue, float64(r.count(st.DestroyedBy)), name, r.name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(actors)) {
		st := actors[name]()
		for _, m := range c.actorDescs {
			ch <- m.Metric(st, name)
		}
	}
	for _, h := range c.histograms() {
		h.Collect(ch)
	}
}

func (c *Collector) histograms() []*prometheus.HistogramVec {
	return []*prometheus.HistogramVec{c.poolWait, c.poolHold, c.poolCreate, c.poolTest, c.actorQueueWait, c.actorRun}
}
