package hist

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketBounds(t *testing.T) {
	for _, v := range []int64{0, 1, 31, 32, 33, 63, 64, 65, 100, 1000, 12345, 1 << 20, 1<<40 + 12345, 1<<62 + 1} {
		b := bucket(v)
		if lo := lower(b); lo > v {
			t.Errorf("bucket(%d) = %d, whose lower bound %d is above the value", v, b, lo)
		}
		if b+1 < buckets {
			if next := lower(b + 1); next <= v {
				t.Errorf("bucket(%d) = %d, but the next bucket starts at %d, not above the value", v, b, next)
			}
		}
	}
}

func TestQuantileWithinBucketError(t *testing.T) {
	tests := []struct {
		name string
		gen  func(r *rand.Rand) int64
	}{
		{"uniform to 1ms", func(r *rand.Rand) int64 { return r.Int64N(int64(time.Millisecond)) }},
		{"exponential around 50µs", func(r *rand.Rand) int64 { return int64(r.ExpFloat64() * 50e3) }},
		{"small", func(r *rand.Rand) int64 { return r.Int64N(40) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var h Histogram
			vals := make([]int64, 100000)
			for i := range vals {
				vals[i] = tt.gen(r)
				h.Record(time.Duration(vals[i]))
			}
			slices.Sort(vals)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				want := vals[int(q*float64(len(vals)))]
				got := int64(h.Quantile(q))
				if got > want || float64(want-got) > float64(want)/subCount+1 {
					t.Errorf("Quantile(%v) = %d, want within 1/%d below %d", q, got, subCount, want)
				}
			}
			if got, want := h.Max(), time.Duration(vals[len(vals)-1]); got != want {
				t.Errorf("Max() = %v, want %v", got, want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	var a, b Histogram
	for i := range 100 {
		a.Record(time.Duration(i))
		b.Record(time.Duration(1000 + i))
	}
	a.Merge(&b)
	if a.Count() != 200 {
		t.Errorf("Count() = %d after merging two histograms of 100, want 200", a.Count())
	}
	if a.Max() != 1099 {
		t.Errorf("Max() = %v, want 1099ns", a.Max())
	}
	if q := a.Quantile(0.25); q != 50 {
		t.Errorf("Quantile(0.25) = %v, want 50ns", q)
	}
}

func TestEmpty(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.Max() != 0 || h.Count() != 0 {
		t.Errorf("empty histogram: Quantile %v, Max %v, Count %d; want zeros", h.Quantile(0.99), h.Max(), h.Count())
	}
}
