package split

import (
	"sync/atomic"
	"testing"
)

func TestRunSharesEveryOperation(t *testing.T) {
	for _, goroutines := range []int{1, 3, 7, 64} {
		res := testing.Benchmark(func(b *testing.B) {
			var total, calls atomic.Int64
			seen := make([]atomic.Bool, goroutines)
			Run(b, goroutines, func(i, n int) {
				if seen[i].Swap(true) {
					b.Errorf("goroutine %d ran twice", i)
				}
				if lo := b.N / goroutines; n < lo || n > lo+1 {
					b.Errorf("goroutine %d got %d of %d operations, want %d or %d", i, n, b.N, lo, lo+1)
				}
				total.Add(int64(n))
				calls.Add(1)
			})
			b.StopTimer()
			if total.Load() != int64(b.N) || calls.Load() != int64(goroutines) {
				b.Errorf("%d goroutines ran %d operations of %d", calls.Load(), total.Load(), b.N)
			}
		})
		if res.N == 0 {
			t.Errorf("%d goroutines: the benchmark failed", goroutines)
		}
	}
}
