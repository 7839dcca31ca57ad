// Package split runs a benchmark's b.N operations split evenly between
// goroutines that start together, the way every workload of the bench
// module times its operations.
package split

import (
	"sync"
	"testing"
)

// Run calls body(i, n) on each of goroutines goroutines, i from 0, n its
// share of b.N (the shares differ by at most one). It resets b's timer once
// every goroutine is started and waiting, so that starting them is not
// timed, releases them together, and returns when all have returned, with
// the timer still running: the caller stops it when the work it measures
// is done. It also turns on b.ReportAllocs.
func Run(b *testing.B, goroutines int, body func(i, n int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i := range goroutines {
		n := b.N / goroutines
		if i < b.N%goroutines {
			n++
		}
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-start
			body(i, n)
		})
	}
	ready.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	close(start)
	done.Wait()
}
