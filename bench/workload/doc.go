// Package workload runs the pool workloads of the comparison on any
// pools.Contender, as functions of a *testing.B, so that the same code
// serves `go test -bench` and the poolbench command.
//
//   - Uncontended: one goroutine takes and gives back; ns/op and allocs/op.
//   - Contended: many goroutines share a small pool, holding each object
//     for no time or about a microsecond of work; throughput and the
//     latency of the take (sampled, one take in eight).
//   - SlowCreate: 256 takers arrive at once at an empty pool of 16 whose
//     creates take 2ms, and hold their object 1ms; the wall time against
//     the ideal (one create, then 16 rounds of holds) shows whether the
//     pool creates in parallel.
//   - Fairness: 64 goroutines share 4 objects, holding each for 50µs of
//     work; the fewest and most takes any goroutine made, and the longest
//     wait.
//
// Each reports its figures with testing.B.ReportMetric, under units that
// benchstat reads.
package workload
