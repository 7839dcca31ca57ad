// Package series is the one helper that packages metrics and
// metrics/pgmetrics and metrics/jsmetrics use to turn a Stats snapshot into Prometheus gauges
// and counters: each series is a name, a help, a type and a func that
// reads its value from the snapshot, listed in a table per kind of Stats.
package series

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A Series is one gauge or counter whose value is read from a Stats
// snapshot of type S at each scrape.
type Series[S any] struct {
	Name, Help string
	Kind       prometheus.ValueType
	Value      func(S) float64
}

// A Number is a count that a Stats field holds.
type Number interface {
	~int | ~int64 | ~uint64
}

// Counter returns the counter name, whose value v reads from a snapshot.
func Counter[S any, N Number](name, help string, v func(S) N) Series[S] {
	return Series[S]{Name: name, Help: help, Kind: prometheus.CounterValue, Value: func(s S) float64 { return float64(v(s)) }}
}

// Gauge returns the gauge name, whose value v reads from a snapshot.
func Gauge[S any, N Number](name, help string, v func(S) N) Series[S] {
	return Series[S]{Name: name, Help: help, Kind: prometheus.GaugeValue, Value: func(s S) float64 { return float64(v(s)) }}
}

// CounterSeconds returns the counter name of a duration that v reads from
// a snapshot, in seconds.
func CounterSeconds[S any](name, help string, v func(S) time.Duration) Series[S] {
	return Series[S]{Name: name, Help: help, Kind: prometheus.CounterValue, Value: func(s S) float64 { return v(s).Seconds() }}
}

// GaugeSeconds returns the gauge name of a duration that v reads from a
// snapshot, in seconds.
func GaugeSeconds[S any](name, help string, v func(S) time.Duration) Series[S] {
	return Series[S]{Name: name, Help: help, Kind: prometheus.GaugeValue, Value: func(s S) float64 { return v(s).Seconds() }}
}

// A Described is a Series with the description a collector gives it: its
// variable labels and the collector's constant ones.
type Described[S any] struct {
	Series[S]
	Desc *prometheus.Desc
}

// Describe describes each of ss with the variable labels and the constant
// labels of one collector, in the order of ss.
func Describe[S any](ss []Series[S], labels []string, constLabels prometheus.Labels) []Described[S] {
	ds := make([]Described[S], len(ss))
	for i, s := range ss {
		ds[i] = Described[S]{Series: s, Desc: prometheus.NewDesc(s.Name, s.Help, labels, constLabels)}
	}
	return ds
}

// Metric returns the series' value read from st, with labelValues, in the
// order of the labels that described it.
func (d Described[S]) Metric(st S, labelValues ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d.Desc, d.Kind, d.Value(st), labelValues...)
}
