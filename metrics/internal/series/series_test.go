package series

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type stats struct {
	Sent    uint64
	Queued  int
	Backlog int64
	Oldest  time.Duration
	Waited  time.Duration
}

// collector reports the series ds read from st, labelled name="x".
type collector[S any] struct {
	ds []Described[S]
	st S
}

func (c collector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.ds {
		ch <- d.Desc
	}
}

func (c collector[S]) Collect(ch chan<- prometheus.Metric) {
	for _, d := range c.ds {
		ch <- d.Metric(c.st, "x")
	}
}

// TestSeries checks that counters and gauges of each kind of count report
// the field they read, as their type, with their help, the collector's
// labels and constant labels.
func TestSeries(t *testing.T) {
	ss := []Series[stats]{
		Counter("sent_total", "Tasks sent.", func(s stats) uint64 { return s.Sent }),
		Gauge("queued", "Tasks queued.", func(s stats) int { return s.Queued }),
		Gauge("backlog", "Tasks behind.", func(s stats) int64 { return s.Backlog }),
		GaugeSeconds("oldest_seconds", "Age of the oldest task.", func(s stats) time.Duration { return s.Oldest }),
		CounterSeconds("wait_seconds_total", "Time tasks waited.", func(s stats) time.Duration { return s.Waited }),
	}
	c := collector[stats]{
		ds: Describe(ss, []string{"name"}, prometheus.Labels{"service": "api"}),
		st: stats{Sent: 7, Queued: 3, Backlog: 1500, Oldest: 250 * time.Millisecond, Waited: 90 * time.Second},
	}
	const want = `
# HELP backlog Tasks behind.
# TYPE backlog gauge
backlog{name="x",service="api"} 1500
# HELP oldest_seconds Age of the oldest task.
# TYPE oldest_seconds gauge
oldest_seconds{name="x",service="api"} 0.25
# HELP queued Tasks queued.
# TYPE queued gauge
queued{name="x",service="api"} 3
# HELP sent_total Tasks sent.
# TYPE sent_total counter
sent_total{name="x",service="api"} 7
# HELP wait_seconds_total Time tasks waited.
# TYPE wait_seconds_total counter
wait_seconds_total{name="x",service="api"} 90
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	for i, d := range c.ds {
		if d.Series.Name != ss[i].Name {
			t.Errorf("Describe put %q at %d, want %q: the order of the table", d.Series.Name, i, ss[i].Name)
		}
	}
}
