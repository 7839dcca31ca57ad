// Package spin burns CPU for a given time without reading the clock, so
// that "hold the object for about a microsecond" costs the same in every
// benchmark and adds no clock reads of its own.
package spin

import (
	"sync"
	"sync/atomic"
	"time"
)

var (
	calibrate  sync.Once
	perMicro   float64 // loop iterations per microsecond
	sinkSwitch atomic.Uint64
)

// loop runs n rounds of a linear congruential step, which the compiler
// cannot drop because the result is stored.
func loop(n int) {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 0 {
		sinkSwitch.Add(1)
	}
}

// Iterations returns how many loop iterations take about d on this
// machine, measured once per process: the fastest of several timed runs,
// so that a run slowed by another process does not shorten every hold.
func Iterations(d time.Duration) int {
	calibrate.Do(func() {
		const n = 1 << 20
		best := time.Duration(1 << 62)
		for range 7 {
			start := time.Now()
			loop(n)
			best = min(best, time.Since(start))
		}
		perMicro = float64(n) / (float64(best) / float64(time.Microsecond))
	})
	return max(int(perMicro*float64(d)/float64(time.Microsecond)), 1)
}

// Run burns n iterations, as counted by Iterations.
func Run(n int) { loop(n) }
