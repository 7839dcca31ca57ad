// Package schedlat reads how long the Go scheduler kept goroutines
// runnable before running them, so that a benchmark can set the tail of
// its own latencies beside the scheduler's: a take that waits for a
// wake-up can return no sooner than the scheduler runs the goroutine
// woken.
package schedlat

import (
	"math"
	"runtime/metrics"
)

// metric is the runtime's histogram of the time goroutines spent runnable
// before running, over the process's life.
const metric = "/sched/latencies:seconds"

// A Snapshot is the scheduler latency histogram at one moment.
type Snapshot struct {
	counts  []uint64
	buckets []float64
}

// Take returns the histogram as it is now.
func Take() Snapshot {
	s := []metrics.Sample{{Name: metric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return Snapshot{}
	}
	h := s[0].Value.Float64Histogram()
	return Snapshot{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// Since returns the histogram of the latencies recorded between earlier
// and s: the counts of s less those of earlier.
func (s Snapshot) Since(earlier Snapshot) Snapshot {
	d := Snapshot{counts: make([]uint64, len(s.counts)), buckets: s.buckets}
	for i, c := range s.counts {
		if i < len(earlier.counts) {
			c -= earlier.counts[i]
		}
		d.counts[i] = c
	}
	return d
}

// Count returns how many latencies s holds.
func (s Snapshot) Count() uint64 {
	var n uint64
	for _, c := range s.counts {
		n += c
	}
	return n
}

// Quantile returns the upper bound, in seconds, of the bucket that holds
// the q-th quantile (0 < q ≤ 1) of s, or NaN if s is empty. The runtime's
// buckets are a few percent wide, so the bound overstates the quantile by
// at most that; an unbounded last bucket reports its lower bound.
func (s Snapshot) Quantile(q float64) float64 {
	n := s.Count()
	if n == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range s.counts {
		seen += c
		if seen >= rank {
			if hi := s.buckets[i+1]; !math.IsInf(hi, 1) {
				return hi
			}
			return s.buckets[i]
		}
	}
	return s.buckets[len(s.buckets)-1]
}
