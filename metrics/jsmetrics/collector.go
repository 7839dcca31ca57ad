package jsmetrics

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/metrics/internal/series"
)

// DefaultTimeout bounds the reads of one scrape when Options.Timeout is
// zero: well within Prometheus's default scrape timeout of 10s.
const DefaultTimeout = 5 * time.Second

// Options shape a Collector. The zero value is ready to use.
type Options struct {
	// Timeout bounds the reads of one scrape, all actors together; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// ConstLabels are added to every series, such as {"service": "api"}.
	ConstLabels prometheus.Labels
}

// An Actor is a durable actor this process runs: a *jsactor.Actor of any
// payload type.
type Actor interface {
	Name() string
	Prefix() string
	Stats(ctx context.Context) (jsactor.Stats, error)
}

// A Collector is a prometheus.Collector for durable actors on JetStream.
// It is safe for concurrent use: actors may be added and removed while it
// is scraped.
type Collector struct {
	timeout time.Duration
	descs   []series.Described[jsactor.Stats] // of metricsOf, in its order
	failed  *prometheus.Desc

	mu     sync.Mutex
	actors map[key]source
}

// key names a durable actor: the same name under two prefixes is two
// actors, with streams of their own.
type key struct{ prefix, name string }

// A source reads one actor's Stats.
type source struct {
	stats func(ctx context.Context) (jsactor.Stats, error)
	// local is whether this process runs the actor's workers, so that
	// Workers and Busy mean something.
	local bool
}

// NewCollector returns a Collector with no actors.
func NewCollector(opts Options) *Collector {
	c := &Collector{
		timeout: cmp.Or(opts.Timeout, DefaultTimeout),
		failed: prometheus.NewDesc("actorpool_actor_stats_read", "The read of a durable actor's Stats, which failed.",
			[]string{"actor", "prefix"}, opts.ConstLabels),
		actors: map[key]source{},
	}
	ss := make([]series.Series[jsactor.Stats], len(metricsOf))
	for i, m := range metricsOf {
		ss[i] = m.Series
	}
	c.descs = series.Describe(ss, []string{"actor", "prefix"}, opts.ConstLabels)
	return c
}

// AddActor has the collector report a, a durable actor this process runs:
// its counters and task gauges, and this process's workers. It fails if an
// actor of that name and prefix was added and not removed.
func (c *Collector) AddActor(a Actor) error {
	return c.add(key{a.Prefix(), a.Name()}, source{stats: a.Stats, local: true})
}

// Add has the collector report the durable actor named name under prefix
// ("" for jsactor.DefaultPrefix), read through nc with jsactor.ReadStats at
// each scrape: for an actor this process only sends to or watches. It
// fails if an actor of that name and prefix was added and not removed.
func (c *Collector) Add(nc *nats.Conn, prefix, name string) error {
	prefix = cmp.Or(prefix, jsactor.DefaultPrefix)
	return c.add(key{prefix, name}, source{stats: func(ctx context.Context) (jsactor.Stats, error) {
		return jsactor.ReadStats(ctx, nc, prefix, name)
	}})
}

func (c *Collector) add(k key, s source) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.actors[k]; ok {
		return fmt.Errorf("jsmetrics: a durable actor named %q under prefix %q is already added; remove it first", k.name, k.prefix)
	}
	c.actors[k] = s
	return nil
}

// Remove stops reporting the actor named name under prefix ("" for
// jsactor.DefaultPrefix).
func (c *Collector) Remove(prefix, name string) {
	c.mu.Lock()
	delete(c.actors, key{cmp.Or(prefix, jsactor.DefaultPrefix), name})
	c.mu.Unlock()
}

// Describe sends nothing, which makes the collector unchecked (see the
// package's documentation for why).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the Stats of every actor added within Options.Timeout, and
// sends their series. An actor whose read fails is sent as an invalid
// metric carrying the error, which the registry reports.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := maps.Clone(c.actors)
	c.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(sources), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.prefix, b.prefix), cmp.Compare(a.name, b.name))
	})

	// The reads run outside the lock: a slow server must not hold up Add
	// and Remove.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, k := range keys {
		s := sources[k]
		st, err := s.stats(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(c.failed, fmt.Errorf("jsmetrics: durable actor %q under prefix %q: %w", k.name, k.prefix, err))
			continue
		}
		for i, m := range metricsOf {
			if m.local && !s.local {
				continue
			}
			ch <- c.descs[i].Metric(st, k.name, k.prefix)
		}
	}
}
