// Package bench is the root of the benchmark module of actorpool: it holds
// nothing but this comment.
//
// The module is separate from the library's so that the pools and worker
// pools it compares against — puddle, vitess smartconnpool, go-commons-pool,
// pond, ants, workerpool, conc, pgxpool, go-redis, River — and the plotting
// library never enter the build of a program that uses actorpool.
//
//   - package pools puts every object pool under comparison behind one small
//     interface, and checks that each one lends correctly;
//   - package workload runs the pool workloads: uncontended, contended,
//     slow create and fairness;
//   - package tasks puts the task actor and the worker pools behind one
//     interface and runs the task workloads;
//   - package servers compares the adapters pgpool and redispool with
//     pgxpool, database/sql, go-redis and redigo on real PostgreSQL and
//     Redis servers;
//   - package queues compares pgactor, the durable actor, with River on
//     the same PostgreSQL: burn-down and sustained throughput, send-to-start
//     latency, and recovery from a worker killed with SIGKILL;
//   - command poolbench runs every workload with every pool back to back,
//     prints markdown tables with ratios to actorpool and draws charts.
//
// docs/benchmarks.md at the repository's root gives the method, the
// figures and how to reproduce them.
package bench
