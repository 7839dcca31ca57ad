package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBuckets(t *testing.T) {
	// Every value falls in the bucket whose bounds hold it, and buckets
	// follow each other without gaps.
	for _, v := range []uint64{0, 1, 15, 16, 17, 31, 32, 33, 1000, 1 << 20, 123456789, 1<<62 + 5, 1<<64 - 1} {
		i := bucketOf(v)
		lo, hi := bucketBounds(i)
		if v < lo || v > hi {
			t.Errorf("value %d in bucket %d, which holds [%d, %d]", v, i, lo, hi)
		}
		if i >= numBuckets {
			t.Errorf("value %d: bucket %d out of range", v, i)
		}
	}
	for i := 1; i < bucketOf(1<<40); i++ {
		_, prevHi := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		if lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, the previous ends at %d", i, lo, prevHi)
		}
	}
}

// TestQuantiles proves that quantiles are within the buckets' precision of
// the exact ones, over the whole run and over an interval.
func TestQuantiles(t *testing.T) {
	var h histogram
	r := rand.New(rand.NewPCG(1, 2))
	var all []time.Duration
	for range 10000 {
		d := time.Duration(r.ExpFloat64() * float64(time.Millisecond))
		all = append(all, d)
		h.record(d)
	}
	first := h.snapshot()
	var later []time.Duration
	for range 5000 {
		d := time.Duration(r.ExpFloat64()*float64(10*time.Millisecond)) + 10*time.Millisecond
		later = append(later, d)
		h.record(d)
	}
	check := func(name string, c *counts, values []time.Duration) {
		t.Helper()
		slices.Sort(values)
		if c.total != uint64(len(values)) {
			t.Errorf("%s: total %d, want %d", name, c.total, len(values))
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			exact := values[int(q*float64(len(values)-1))]
			got := c.quantile(q)
			if diff := float64(got-exact) / float64(exact); diff > 0.07 || diff < -0.07 {
				t.Errorf("%s: p%v = %v, exact %v", name, q*100, got, exact)
			}
		}
	}
	check("first", first, all)
	check("interval", h.snapshot().since(first), later)
	if m := h.snapshot().max; m != slices.Max(append(all, later...)) {
		t.Errorf("max %v, want %v", m, slices.Max(append(all, later...)))
	}
	var empty counts
	if q := empty.quantile(0.5); q != 0 {
		t.Errorf("quantile of nothing = %v, want 0", q)
	}
}
