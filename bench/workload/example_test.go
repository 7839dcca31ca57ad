package workload_test

import (
	"fmt"
	"testing"

	"github.com/actorpool/actorpool/bench/pools"
	"github.com/actorpool/actorpool/bench/workload"
)

// The workloads are functions of a *testing.B, so testing.Benchmark runs
// them outside go test, as poolbench does. The figures depend on the
// machine, so this example shows the call and prints no output to check.
func Example() {
	cs, _ := pools.Select("actorpool")
	cell := workload.Cell{Size: 8, Hold: 0, Goroutines: 64}
	r := testing.Benchmark(func(b *testing.B) { workload.Contended(b, cs[0], cell) })
	fmt.Printf("%s %s: %.0f takes/s, p99.9 %.0f ns\n", cs[0].Name, cell.Name(), r.Extra["ops/s"], r.Extra["p99.9-ns"])
}
