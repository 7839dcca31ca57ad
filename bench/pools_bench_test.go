package bench_test

import (
	"context"
	"sync"
	"testing"

	"github.com/actorpool/actorpool/bench/pools"
	"github.com/actorpool/actorpool/bench/workload"
)

// checked fails b unless c passes pools.Check, which runs once per pool
// and process: no pool is measured before it is shown to lend correctly.
func checked(b *testing.B, c pools.Contender) {
	b.Helper()
	checksMu.Lock()
	once, ok := checks[c.Name]
	if !ok {
		once = sync.OnceValue(func() error { return pools.Check(context.Background(), c) })
		checks[c.Name] = once
	}
	checksMu.Unlock()
	if err := once(); err != nil {
		b.Fatalf("correctness check failed, not measuring: %v", err)
	}
}

var (
	checksMu sync.Mutex
	checks   = map[string]func() error{}
)

// forEachPool runs bench as a sub-benchmark pool=<name> for every pool,
// back to back.
func forEachPool(b *testing.B, bench func(b *testing.B, c pools.Contender)) {
	for _, c := range pools.All() {
		b.Run("pool="+c.Name, func(b *testing.B) {
			checked(b, c)
			bench(b, c)
		})
	}
}

func BenchmarkUncontended(b *testing.B) {
	forEachPool(b, workload.Uncontended)
}

func BenchmarkUncontendedDirect(b *testing.B) {
	b.Run("pool=actorpool", workload.ActorpoolDirect)
	b.Run("pool=puddle", workload.PuddleDirect)
	b.Run("pool=syncpool", workload.SyncPoolDirect)
}

// BenchmarkContended runs the contended matrix. Under -short it runs only
// the cells with at most 64 goroutines.
func BenchmarkContended(b *testing.B) {
	for _, cell := range workload.Cells() {
		if testing.Short() && cell.Goroutines > 64 {
			continue
		}
		b.Run(cell.Name(), func(b *testing.B) {
			forEachPool(b, func(b *testing.B, c pools.Contender) {
				workload.Contended(b, c, cell)
			})
		})
	}
}

func BenchmarkSlowCreate(b *testing.B) {
	forEachPool(b, workload.SlowCreate)
}

func BenchmarkFairness(b *testing.B) {
	forEachPool(b, workload.Fairness)
}
