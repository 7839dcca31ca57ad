package jsmetrics

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/metrics/internal/durable"
)

// DefaultTimeout bounds the reads of one scrape when Options.Timeout is
// zero: well within Prometheus's default scrape timeout of 10s.
const DefaultTimeout = durable.DefaultTimeout

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
	// The actors are keyed by prefix and name: the same name under two
	// prefixes is two actors, with streams of their own.
	c *durable.Collector[jsactor.Stats]
}

// NewCollector returns a Collector with no actors.
func NewCollector(opts Options) *Collector {
	return &Collector{durable.New(durable.Config[jsactor.Stats]{
		Package: "jsmetrics", Label: "prefix", Where: "under prefix",
		Timeout: opts.Timeout, ConstLabels: opts.ConstLabels, Metrics: metricsOf,
	})}
}

// AddActor has the collector report a, a durable actor this process runs:
// its counters and task gauges, and this process's workers. It fails if an
// actor of that name and prefix was added and not removed.
func (c *Collector) AddActor(a Actor) error {
	return c.c.Add(a.Prefix(), a.Name(), a.Stats, true)
}

// Add has the collector report the durable actor named name under prefix
// ("" for jsactor.DefaultPrefix), read through nc with jsactor.ReadStats at
// each scrape: for an actor this process only sends to or watches. It
// fails if nc is nil, name is empty, or an actor of that name and prefix
// was added and not removed.
func (c *Collector) Add(nc *nats.Conn, prefix, name string) error {
	prefix = cmp.Or(prefix, jsactor.DefaultPrefix)
	if nc == nil {
		return fmt.Errorf("jsmetrics: durable actor %q under prefix %q: nc is nil", name, prefix)
	}
	return c.c.Add(prefix, name, func(ctx context.Context) (jsactor.Stats, error) {
		return jsactor.ReadStats(ctx, nc, prefix, name)
	}, false)
}

// Remove stops reporting the actor named name under prefix ("" for
// jsactor.DefaultPrefix).
func (c *Collector) Remove(prefix, name string) {
	c.c.Remove(cmp.Or(prefix, jsactor.DefaultPrefix), name)
}

// Describe sends nothing, which makes the collector unchecked (see the
// package's documentation for why).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the Stats of every actor added within Options.Timeout, and
// sends their series. An actor whose read fails is sent as an invalid
// metric carrying the error, which the registry reports.
func (c *Collector) Collect(ch chan<- prometheus.Metric) { c.c.Collect(ch) }
