// Package tasks compares the task actor of package actor with a buffered
// channel served by N goroutines (the floor) and the Go worker pools pond
// v2, ants v2, gammazero/workerpool and sourcegraph/conc.
//
// Every executor runs the same task — nothing, about a microsecond of CPU
// work, or a one-millisecond wait — on a fixed number of workers, with one
// of two queue semantics:
//
//   - bounded: at most Queue tasks wait; a producer that finds the queue
//     full blocks until there is room. ants and conc have no queue at all:
//     a producer blocks until a worker is free, which is a bound of zero.
//   - unbounded: producers never block. The channel floor gets a buffer
//     as large as the run; ants and conc have no such mode.
//
// Run times from the first submit to the last completion, so that an
// executor cannot look fast by queueing work it has yet to do.
package tasks
