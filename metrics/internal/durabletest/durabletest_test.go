package durabletest

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/metrics/internal/durable"
	"github.com/actorpool/actorpool/metrics/internal/series"
)

// stats are the values of one actor's series, by family name.
type stats map[string]float64

var (
	familyRE = regexp.MustCompile(`(?m)^# HELP (\S+) (.*)\n# TYPE \S+ (\w+)$`)
	seriesRE = regexp.MustCompile(`(?m)^(\S+)\{actor="(\w+)",[^}]*\} (\S+)$`)
)

// tableOf returns a series for each family of text, whose value is read
// from stats by its name; the worker gauges are local, as the packages'.
func tableOf(t *testing.T, text string) []durable.Metric[stats] {
	var ms []durable.Metric[stats]
	for _, m := range familyRE.FindAllStringSubmatch(text, -1) {
		kind := prometheus.GaugeValue
		if m[3] == "counter" {
			kind = prometheus.CounterValue
		}
		name := m[1]
		ms = append(ms, durable.Metric[stats]{
			Series: series.Series[stats]{Name: name, Help: m[2], Kind: kind, Value: func(s stats) float64 { return s[name] }},
			Local:  strings.HasSuffix(name, "workers"),
		})
	}
	if len(ms) == 0 {
		t.Fatal("no families in the text")
	}
	return ms
}

// valuesOf returns the values that text gives the series of actor.
func valuesOf(t *testing.T, text, actor string) stats {
	s := stats{}
	for _, m := range seriesRE.FindAllStringSubmatch(text, -1) {
		if m[2] != actor {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		s[m[1]] = v
	}
	return s
}

// unchecked is a durable.Collector registered as the packages' are.
type unchecked struct{ *durable.Collector[stats] }

func (unchecked) Describe(chan<- *prometheus.Desc) {}

// recorder is a testing.TB that keeps the errors it is told.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Error(args ...any)         { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }

// with returns s with the values of change.
func with(s stats, change stats) stats {
	s = maps.Clone(s)
	maps.Copy(s, change)
	return s
}

// TestCheckMapping checks that CheckMapping passes the collector whose
// series are Distinct's and fails one that differs in a value, a label
// or a series.
func TestCheckMapping(t *testing.T) {
	want := Distinct("schema", "jobs")
	table := tableOf(t, want)
	if len(table) != 16 {
		t.Fatalf("%d families in Distinct, want the 16 of a durable actor", len(table))
	}
	right := valuesOf(t, want, "audit")
	tests := []struct {
		name  string
		label string
		add   map[string]stats // by actor, all local
		fails bool
	}{
		{name: "right", label: "schema", add: map[string]stats{"audit": right}},
		{name: "a value", label: "schema", add: map[string]stats{"audit": with(right, stats{"actorpool_actor_tasks_completed_total": 61})}, fails: true},
		{name: "the place's label", label: "prefix", add: map[string]stats{"audit": right}, fails: true},
		{name: "an actor more", label: "schema", add: map[string]stats{"audit": right, "mail": right}, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := durable.New(durable.Config[stats]{Package: "test", Label: tt.label, Where: "in", Metrics: table})
			for name, s := range tt.add {
				c.Add("jobs", name, func(context.Context) (stats, error) { return s, nil }, true)
			}
			r := &recorder{TB: t}
			CheckMapping(r, unchecked{c}, want)
			if failed := len(r.errs) > 0; failed != tt.fails {
				t.Errorf("CheckMapping failed: %v, want %v; errors: %q", failed, tt.fails, r.errs)
			}
		})
	}
}

// TestCheckScenario checks that CheckScenario passes the collector of the
// scenario's two actors, audit local and mail watched, whatever their
// lost runs, and fails one that differs in a value, in whose oldest task
// waits, or in which actor is local.
func TestCheckScenario(t *testing.T) {
	text := placed(scenario, "prefix", "metrics")
	// Every family, those the scenario leaves out too, as a collector's.
	table := tableOf(t, Distinct("prefix", "x"))
	audit := with(valuesOf(t, text, "audit"), stats{"actorpool_actor_lost_runs_total": 4})
	mail := with(valuesOf(t, text, "mail"), stats{"actorpool_actor_oldest_queued_seconds": 1.5})
	tests := []struct {
		name        string
		audit, mail stats
		mailLocal   bool
		fails       bool
	}{
		{name: "right", audit: audit, mail: mail},
		{name: "a value", audit: with(audit, stats{"actorpool_actor_queued_tasks": 1}), mail: mail, fails: true},
		{name: "mail's oldest not waiting", audit: audit, mail: with(mail, stats{"actorpool_actor_oldest_queued_seconds": 0}), fails: true},
		{name: "audit's oldest waiting", audit: with(audit, stats{"actorpool_actor_oldest_queued_seconds": 1}), mail: mail, fails: true},
		{name: "mail local", audit: audit, mail: mail, mailLocal: true, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := durable.New(durable.Config[stats]{Package: "test", Label: "prefix", Where: "under", Metrics: table})
			c.Add("metrics", "audit", func(context.Context) (stats, error) { return tt.audit, nil }, true)
			c.Add("metrics", "mail", func(context.Context) (stats, error) { return tt.mail, nil }, tt.mailLocal)
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(unchecked{c})
			r := &recorder{TB: t}
			CheckScenario(r, reg, unchecked{c}, "prefix", "metrics")
			if failed := len(r.errs) > 0; failed != tt.fails {
				t.Errorf("CheckScenario failed: %v, want %v; errors: %q", failed, tt.fails, r.errs)
			}
		})
	}
}
