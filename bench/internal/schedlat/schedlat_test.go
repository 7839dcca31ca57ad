package schedlat

import (
	"math"
	"runtime"
	"sync"
	"testing"
)

func TestQuantile(t *testing.T) {
	s := Snapshot{counts: []uint64{0, 90, 9, 1}, buckets: []float64{0, 1e-6, 1e-5, 1e-4, math.Inf(1)}}
	for _, tc := range []struct {
		q, want float64
	}{
		{0.5, 1e-5},
		{0.9, 1e-5},
		{0.99, 1e-4},
		{0.999, 1e-4},
		{1, 1e-4}, // the last, unbounded bucket reports its lower bound
	} {
		if got := s.Quantile(tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := (Snapshot{}).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("Quantile of an empty snapshot = %v, want NaN", got)
	}
}

func TestSinceCountsWhatRanBetween(t *testing.T) {
	before := Take()
	if before.counts == nil {
		t.Skip("this runtime has no " + metric)
	}
	// Goroutines that block and are woken are each made runnable, and the
	// scheduler records how long they waited to run.
	var wg sync.WaitGroup
	ch := make(chan struct{})
	for range 100 {
		wg.Go(func() { <-ch; runtime.Gosched() })
	}
	close(ch)
	wg.Wait()
	d := Take().Since(before)
	if d.Count() == 0 {
		t.Fatal("no scheduler latency recorded for 100 goroutines woken")
	}
	if d.Count() > Take().Count() {
		t.Fatalf("difference holds %d latencies, more than the process's %d", d.Count(), Take().Count())
	}
	if q := d.Quantile(0.999); math.IsNaN(q) || q < 0 {
		t.Fatalf("p99.9 of the difference = %v", q)
	}
}
