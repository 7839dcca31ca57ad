package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// A histogram counts durations in log-linear buckets: 16 to each power of
// two, so that a quantile read from it is within about 6% of the true one.
// Recording is one atomic add, safe from any number of goroutines, and a
// snapshot can be subtracted from a later one to get the counts of an
// interval.
type histogram struct {
	buckets [numBuckets]atomic.Uint64
	max     atomic.Int64
}

const (
	subBits    = 4
	subCount   = 1 << subBits
	numBuckets = (64 - subBits + 1) * subCount
)

// bucketOf returns the bucket of a duration of v nanoseconds.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return (shift+1)*subCount + int(v>>shift) - subCount
}

// bucketBounds returns the smallest and largest value, in nanoseconds, that
// fall in bucket i.
func bucketBounds(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i)
	}
	shift := i/subCount - 1
	lo = uint64(i%subCount+subCount) << shift
	return lo, lo + (1 << shift) - 1
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(uint64(d))].Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// snapshot copies the counts.
func (h *histogram) snapshot() *counts {
	c := &counts{max: time.Duration(h.max.Load())}
	for i := range h.buckets {
		n := h.buckets[i].Load()
		c.n[i] = n
		c.total += n
	}
	return c
}

// counts is a histogram's content at one instant, or over an interval.
type counts struct {
	n     [numBuckets]uint64
	total uint64
	max   time.Duration // over the whole run, not the interval
}

// since returns the counts recorded after prev was taken.
func (c *counts) since(prev *counts) *counts {
	if prev == nil {
		return c
	}
	d := &counts{total: c.total - prev.total, max: c.max}
	for i := range c.n {
		d.n[i] = c.n[i] - prev.n[i]
	}
	return d
}

// quantile returns the duration below which a fraction q of the counts lie,
// as the middle of the bucket it falls in; 0 when there are none.
func (c *counts) quantile(q float64) time.Duration {
	if c.total == 0 {
		return 0
	}
	rank := uint64(q*float64(c.total-1)) + 1
	var seen uint64
	for i, n := range c.n {
		seen += n
		if seen >= rank {
			lo, hi := bucketBounds(i)
			mid := time.Duration(lo + (hi-lo)/2)
			if c.max > 0 && mid > c.max {
				return c.max
			}
			return mid
		}
	}
	return c.max
}

// countBelow returns how many counts are at most d, to the precision of a
// bucket.
func (c *counts) countBelow(d time.Duration) uint64 {
	var n uint64
	for i, k := range c.n {
		if _, hi := bucketBounds(i); hi > uint64(d) {
			break
		}
		n += k
	}
	return n
}
