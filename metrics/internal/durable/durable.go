// Package durable is the core that packages metrics/pgmetrics and
// metrics/jsmetrics share: a set of durable actors, each named by its name
// and its place (a pgactor schema, a jsactor prefix), whose Stats are read
// at each scrape within a timeout and reported as the series of a table,
// or as a failed read. It knows neither backend: each package gives it the
// Stats type, its table, the label of a place and the words of its errors.
package durable

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/metrics/internal/series"
)

// DefaultTimeout bounds the reads of one scrape when Config.Timeout is
// zero: well within Prometheus's default scrape timeout of 10s.
const DefaultTimeout = 5 * time.Second

// A Metric is one gauge or counter read from a durable actor's Stats.
type Metric[S any] struct {
	series.Series[S]
	// Local marks the gauges of this process's workers, reported only for
	// an actor whose workers run here.
	Local bool
}

// Config shapes a Collector.
type Config[S any] struct {
	// Package starts the collector's errors, such as "pgmetrics".
	Package string
	// Label is the label, beside "actor", that holds an actor's place,
	// such as "schema".
	Label string
	// Where says an actor's place in errors, before its value quoted,
	// such as "in schema".
	Where string
	// Timeout bounds the reads of one scrape, all actors together; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// ConstLabels are added to every series.
	ConstLabels prometheus.Labels
	// Metrics are the series of every actor, in the order they are sent.
	Metrics []Metric[S]
}

// A Collector reports durable actors whose Stats are of type S. It is
// safe for concurrent use: actors may be added and removed while it is
// scraped.
type Collector[S any] struct {
	pkg, where string
	timeout    time.Duration
	metrics    []Metric[S]
	descs      []series.Described[S] // of metrics, in its order
	failed     *prometheus.Desc

	mu     sync.Mutex
	actors map[key]source[S]
}

// key names a durable actor: the same name in two places is two actors.
type key struct{ place, name string }

// A source reads one actor's Stats.
type source[S any] struct {
	stats func(ctx context.Context) (S, error)
	local bool
}

// New returns a Collector with no actors.
func New[S any](cfg Config[S]) *Collector[S] {
	labels := []string{"actor", cfg.Label}
	ss := make([]series.Series[S], len(cfg.Metrics))
	for i, m := range cfg.Metrics {
		ss[i] = m.Series
	}
	return &Collector[S]{
		pkg:     cfg.Package,
		where:   cfg.Where,
		timeout: cmp.Or(cfg.Timeout, DefaultTimeout),
		metrics: cfg.Metrics,
		descs:   series.Describe(ss, labels, cfg.ConstLabels),
		// The help is the same for both packages: a registry refuses one
		// family with two helps.
		failed: prometheus.NewDesc("actorpool_actor_stats_read", "The read of a durable actor's Stats, which failed.",
			labels, cfg.ConstLabels),
		actors: map[key]source[S]{},
	}
}

// Add has the collector report the actor named name in place, whose Stats
// stats reads at each scrape; local is whether this process runs its
// workers, so that the Local series mean something. It fails if name is
// empty, stats is nil, or an actor of that name and place was added and
// not removed.
func (c *Collector[S]) Add(place, name string, stats func(ctx context.Context) (S, error), local bool) error {
	// Refused here, where the mistake is made: a nil func would panic in
	// every scrape, losing the other actors with it, and an empty label
	// value is, to Prometheus, no label at all.
	if name == "" {
		return fmt.Errorf("%s: a durable actor %s %q needs a name: it is the label of its series", c.pkg, c.where, place)
	}
	if stats == nil {
		return fmt.Errorf("%s: durable actor %q %s %q has a nil Stats func", c.pkg, name, c.where, place)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key{place, name}
	if _, ok := c.actors[k]; ok {
		return fmt.Errorf("%s: a durable actor named %q %s %q is already added; remove it first", c.pkg, name, c.where, place)
	}
	c.actors[k] = source[S]{stats: stats, local: local}
	return nil
}

// Remove stops reporting the actor named name in place.
func (c *Collector[S]) Remove(place, name string) {
	c.mu.Lock()
	delete(c.actors, key{place, name})
	c.mu.Unlock()
}

// Collect reads the Stats of every actor added, in the order of their
// places and names, within the timeout, and sends their series. An actor
// whose read fails is sent as an invalid metric carrying the error, which
// the registry reports.
func (c *Collector[S]) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := maps.Clone(c.actors)
	c.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(sources), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.place, b.place), cmp.Compare(a.name, b.name))
	})

	// The reads run outside the lock: a slow server must not hold up Add
	// and Remove.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, k := range keys {
		s := sources[k]
		st, err := s.stats(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(c.failed, fmt.Errorf("%s: durable actor %q %s %q: %w", c.pkg, k.name, c.where, k.place, err))
			continue
		}
		for i, m := range c.metrics {
			if m.Local && !s.local {
				continue
			}
			ch <- c.descs[i].Metric(st, k.name, k.place)
		}
	}
}
