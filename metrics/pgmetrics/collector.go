package pgmetrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/metrics/internal/durable"
	"github.com/actorpool/actorpool/pgactor"
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

// An Actor is a durable actor this process runs: a *pgactor.Actor of any
// payload type.
type Actor interface {
	Name() string
	Schema() string
	Stats(ctx context.Context) (pgactor.Stats, error)
}

// A Collector is a prometheus.Collector for durable actors. It is safe for
// concurrent use: actors may be added and removed while it is scraped.
type Collector struct {
	// The actors are keyed by schema and name: the same name in two
	// schemas is two actors.
	c *durable.Collector[pgactor.Stats]
}

// NewCollector returns a Collector with no actors.
func NewCollector(opts Options) *Collector {
	return &Collector{durable.New(durable.Config[pgactor.Stats]{
		Package: "pgmetrics", Label: "schema", Where: "in schema",
		Timeout: opts.Timeout, ConstLabels: opts.ConstLabels, Metrics: metricsOf,
	})}
}

// AddActor has the collector report a, a durable actor this process runs:
// its counters and task gauges, and this process's workers. It fails if an
// actor of that name and schema was added and not removed.
func (c *Collector) AddActor(a Actor) error {
	return c.c.Add(a.Schema(), a.Name(), a.Stats, true)
}

// Add has the collector report the durable actor named name in schema,
// read from db with pgactor.ReadStats at each scrape: for an actor this
// process only sends to or watches. db must be safe for concurrent use, as
// scrapes may overlap: a *pgpool.Pool, not a *pgx.Conn. It fails if db is
// nil, name is empty, or an actor of that name and schema was added and
// not removed.
func (c *Collector) Add(db pgactor.Querier, schema, name string) error {
	if db == nil {
		return fmt.Errorf("pgmetrics: durable actor %q in schema %q: db is nil", name, schema)
	}
	return c.c.Add(schema, name, func(ctx context.Context) (pgactor.Stats, error) {
		return pgactor.ReadStats(ctx, db, schema, name)
	}, false)
}

// Remove stops reporting the actor named name in schema.
func (c *Collector) Remove(schema, name string) {
	c.c.Remove(schema, name)
}

// Describe sends nothing, which makes the collector unchecked (see the
// package's documentation for why).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the Stats of every actor added, one query each, within
// Options.Timeout, and sends their series. An actor whose read fails is
// sent as an invalid metric carrying the error, which the registry reports.
func (c *Collector) Collect(ch chan<- prometheus.Metric) { c.c.Collect(ch) }
