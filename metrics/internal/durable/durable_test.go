package durable

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorpool/actorpool/metrics/internal/series"
)

type stats struct{ Sent, Workers int }

var table = []Metric[stats]{
	{Series: series.Counter("sent_total", "Tasks sent.", func(s stats) int { return s.Sent })},
	{Series: series.Gauge("workers", "Workers here.", func(s stats) int { return s.Workers }), Local: true},
}

func newCollector(timeout time.Duration) *Collector[stats] {
	return New(Config[stats]{
		Package: "testmetrics", Label: "shelf", Where: "on shelf",
		Timeout: timeout, ConstLabels: prometheus.Labels{"service": "api"}, Metrics: table,
	})
}

func reads(s stats, err error) func(context.Context) (stats, error) {
	return func(context.Context) (stats, error) { return s, err }
}

// wrapped makes a Collector[stats] a prometheus.Collector, unchecked as
// the packages' are.
type wrapped struct{ *Collector[stats] }

func (wrapped) Describe(chan<- *prometheus.Desc) {}

// TestCollect checks what a scrape reports of the actors added: the Local
// series of local actors only, labelled by name and place, in the
// registry's order whatever the order of the adds; and a read that fails
// as an error naming the actor, the others still gathered.
func TestCollect(t *testing.T) {
	tests := []struct {
		name    string
		add     func(c *Collector[stats]) error
		want    string
		wantErr string // "" for none
	}{
		{
			name: "local and watched",
			add: func(c *Collector[stats]) error {
				return errors.Join(
					c.Add("b", "audit", reads(stats{Sent: 2}, nil), false),
					c.Add("a", "mail", reads(stats{Sent: 5, Workers: 3}, nil), true),
				)
			},
			want: `
# HELP sent_total Tasks sent.
# TYPE sent_total counter
sent_total{actor="audit",service="api",shelf="b"} 2
sent_total{actor="mail",service="api",shelf="a"} 5
# HELP workers Workers here.
# TYPE workers gauge
workers{actor="mail",service="api",shelf="a"} 3
`,
		},
		{
			name: "a read fails",
			add: func(c *Collector[stats]) error {
				return errors.Join(
					c.Add("a", "audit", reads(stats{Sent: 1}, nil), false),
					c.Add("a", "mail", reads(stats{}, errors.New("connection refused")), true),
				)
			},
			want: `
# HELP sent_total Tasks sent.
# TYPE sent_total counter
sent_total{actor="audit",service="api",shelf="a"} 1
`,
			wantErr: `testmetrics: durable actor "mail" on shelf "a": connection refused`,
		},
		{name: "none", add: func(*Collector[stats]) error { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector(0)
			if err := tt.add(c); err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(wrapped{c})
			err := testutil.GatherAndCompare(reg, strings.NewReader(tt.want))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Error(err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("gather: %v, want an error containing %q", err, tt.wantErr)
			}
			if tt.wantErr != "" {
				families, _ := reg.Gather()
				var got strings.Builder
				for _, f := range families {
					got.WriteString(f.GetName())
				}
				if got.String() != "sent_total" {
					t.Errorf("gathered %q beside the error, want the readable actor's sent_total", got.String())
				}
			}
		})
	}
}

// TestAddRemove checks that an actor is its place and name together, that
// one is added once until removed, and that Remove stops its series.
func TestAddRemove(t *testing.T) {
	c := newCollector(0)
	if err := c.Add("a", "audit", reads(stats{}, nil), true); err != nil {
		t.Fatal(err)
	}
	err := c.Add("a", "audit", reads(stats{}, nil), false)
	if want := `testmetrics: a durable actor named "audit" on shelf "a" is already added; remove it first`; err == nil || err.Error() != want {
		t.Errorf("a second add: %v, want %q", err, want)
	}
	if err := c.Add("b", "audit", reads(stats{}, nil), false); err != nil {
		t.Errorf("the same name on another shelf: %v", err)
	}
	if n := testutil.CollectAndCount(wrapped{c}); n != 3 {
		t.Errorf("%d series, want 3: 2 of the local actor, 1 of the other", n)
	}
	c.Remove("a", "audit")
	c.Remove("a", "never added")
	if n := testutil.CollectAndCount(wrapped{c}); n != 1 {
		t.Errorf("after Remove: %d series, want the other shelf's 1", n)
	}
	if err := c.Add("a", "audit", reads(stats{}, nil), true); err != nil {
		t.Errorf("add after Remove: %v", err)
	}
}

// TestTimeout checks that the reads of one scrape share the timeout: two
// actors whose reads never end take one timeout together, and each is
// reported with the deadline's error; 0 is DefaultTimeout.
func TestTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeout, want time.Duration
	}{
		{3 * time.Second, 3 * time.Second},
		{0, DefaultTimeout},
	} {
		synctest.Test(t, func(t *testing.T) {
			c := newCollector(tt.timeout)
			block := func(ctx context.Context) (stats, error) {
				<-ctx.Done()
				return stats{}, ctx.Err()
			}
			c.Add("a", "audit", block, true)
			c.Add("a", "mail", block, true)
			reg := prometheus.NewRegistry()
			reg.MustRegister(wrapped{c})
			start := time.Now()
			_, err := reg.Gather()
			if took := time.Since(start); took != tt.want {
				t.Errorf("timeout %v: the scrape took %v, want %v", tt.timeout, took, tt.want)
			}
			for _, name := range []string{"audit", "mail"} {
				if want := `"` + name + `" on shelf "a": context deadline exceeded`; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("gather: %v, want an error containing %q", err, want)
				}
			}
		})
	}
}

// TestAddRefusesWhatCannotBeScraped: an empty name — a label whose value
// is empty is, to Prometheus, no label at all — or a nil Stats func is
// refused by Add. Before the fix both were accepted, and a nil func
// panicked in every scrape, which the registry recovers as an error for
// the whole collector: every actor sorted after it went missing.
func TestAddRefusesWhatCannotBeScraped(t *testing.T) {
	c := newCollector(time.Second)
	if err := c.Add("a", "", reads(stats{}, nil), false); err == nil {
		t.Error("Add of an actor with no name succeeded")
	}
	if err := c.Add("a", "audit", nil, false); err == nil {
		t.Error("Add of a nil Stats func succeeded")
	}
	if n := testutil.CollectAndCount(wrapped{c}); n != 0 {
		t.Errorf("%d series after refused adds, want none", n)
	}
}
