package actorpool

import "time"

// An Observer is told how long a pool's events take, for metrics such as
// latency histograms. The pool calls it on the goroutine where the event
// ends, so its methods must be quick and safe for concurrent use.
//
// Measuring hold times takes two clock reads per lease, so the pool reads
// the clock on the take and give-back path only when Config.Observer is set.
type Observer interface {
	// ObserveWait reports a take that had to queue, when it ends: served
	// (err nil), or failed with err.
	ObserveWait(d time.Duration, err error)
	// ObserveHold reports how long a lease was held, when it is given back
	// or destroyed.
	ObserveHold(d time.Duration)
	// ObserveCreate reports a Factory.Create call, when it returns.
	ObserveCreate(d time.Duration, err error)
	// ObserveTest reports a Factory.Test call, when it returns.
	ObserveTest(d time.Duration, err error)
}
