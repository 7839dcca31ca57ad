package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestEmptyBucketsAreTheDefault: Options.Buckets empty but not nil, as a
// list read from a flag or a file often is, takes DefaultBuckets, as nil
// does. Before the fix the histograms got the client library's own
// default (11 buckets from 5ms), which the doc names nowhere and which
// cannot tell an idle take (microseconds) from another.
func TestEmptyBucketsAreTheDefault(t *testing.T) {
	c := NewCollector(Options{Buckets: []float64{}})
	c.PoolObserver("p").ObserveHold(time.Millisecond)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "actorpool_pool_hold_seconds" {
			continue
		}
		var got []float64
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			got = append(got, b.GetUpperBound())
		}
		if len(got) != len(DefaultBuckets) || got[0] != DefaultBuckets[0] {
			t.Errorf("buckets %v, want DefaultBuckets %v", got, DefaultBuckets)
		}
		return
	}
	t.Fatal("no hold histogram gathered")
}
