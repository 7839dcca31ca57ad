// Package hist records durations in a fixed-size log-linear histogram, so
// that a benchmark can keep every latency it samples without allocating
// and read percentiles from them afterwards.
package hist

import (
	"math/bits"
	"testing"
	"time"
)

// subBits is how many bits of mantissa a bucket keeps: 32 buckets per
// power of two, so a percentile is off by at most 1/32, about 3%.
const subBits = 5

const (
	subCount = 1 << subBits
	buckets  = (64 - subBits + 1) * subCount
)

// A Histogram counts durations. Its zero value is empty and ready to use.
// It is not safe for concurrent use: give each goroutine its own and Merge
// them.
type Histogram struct {
	counts [buckets]uint64
	n      uint64
	max    int64
}

func bucket(v int64) int {
	if v < subCount {
		return int(v)
	}
	exp := bits.Len64(uint64(v)) - subBits // ≥ 1
	return exp*subCount + int(uint64(v)>>(exp-1)) - subCount
}

// lower returns the smallest value that falls in bucket b.
func lower(b int) int64 {
	if b < subCount {
		return int64(b)
	}
	exp := b / subCount
	return int64(b%subCount+subCount) << (exp - 1)
}

// Record counts d. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucket(v)]++
	h.n++
	h.max = max(h.max, v)
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count returns how many durations were recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the longest duration recorded, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Report reports the 50th, 99th and 99.9th percentiles and the maximum to b
// as p50-ns, p99-ns, p99.9-ns and max-ns, the names every workload and
// poolbench's tables use.
func (h *Histogram) Report(b *testing.B) {
	b.ReportMetric(float64(h.Quantile(0.50)), "p50-ns")
	b.ReportMetric(float64(h.Quantile(0.99)), "p99-ns")
	b.ReportMetric(float64(h.Quantile(0.999)), "p99.9-ns")
	b.ReportMetric(float64(h.Max()), "max-ns")
}

// Quantile returns the duration below which a fraction q of the recorded
// durations fall, as the lower bound of its bucket, or 0 when the histogram
// is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	if rank >= h.n {
		rank = h.n - 1
	}
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen > rank {
			return time.Duration(min(lower(b), h.max))
		}
	}
	return time.Duration(h.max)
}
