package workload

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/internal/hist"
	"github.com/actorpool/actorpool/bench/internal/schedlat"
	"github.com/actorpool/actorpool/bench/internal/spin"
	"github.com/actorpool/actorpool/bench/internal/split"
	"github.com/actorpool/actorpool/bench/pools"
)

// sampleMask picks the takes whose latency Contended times: one in eight.
// Reading the clock twice costs about as much as a whole uncontended take,
// so timing every take would hide what the pools cost; one in eight adds a
// few nanoseconds to every pool alike and leaves enough samples for the
// 99.9th percentile.
const sampleMask = 7

func newPool(b *testing.B, c pools.Contender, size int, f *pools.Factory) pools.Pool {
	b.Helper()
	p, err := c.New(pools.Config{Size: size, Factory: f})
	if err != nil {
		b.Fatalf("%s: %v", c.Name, err)
	}
	return p
}

func closePool(b *testing.B, c pools.Contender, p pools.Pool) {
	b.Helper()
	if err := p.Close(); err != nil {
		b.Errorf("%s: Close: %v", c.Name, err)
	}
}

// Uncontended takes and gives back an object on one goroutine, b.N times,
// from a pool of 8 that already holds the object.
func Uncontended(b *testing.B, c pools.Contender) {
	p := newPool(b, c, 8, &pools.Factory{})
	defer closePool(b, c, p)
	ctx := context.Background()
	nop := func(*pools.Object) {}
	if err := p.Do(ctx, nop); err != nil {
		b.Fatalf("%s: %v", c.Name, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := p.Do(ctx, nop); err != nil {
			b.Fatalf("%s: %v", c.Name, err)
		}
	}
}

// A taker is one goroutine of Contended.
type taker struct {
	h       hist.Histogram
	t0      time.Time
	sampled bool
	iters   int
	err     error
}

func (t *taker) hold(*pools.Object) {
	if t.sampled {
		t.h.Record(time.Since(t.t0))
	}
	if t.iters > 0 {
		spin.Run(t.iters)
	}
}

func (t *taker) run(ctx context.Context, p pools.Pool, n int) {
	hold := t.hold
	for i := range n {
		t.sampled = i&sampleMask == 0
		if t.sampled {
			t.t0 = time.Now()
		}
		if err := p.Do(ctx, hold); err != nil {
			t.err = err
			return
		}
	}
}

// Contended runs b.N takes, split evenly between cell.Goroutines
// goroutines that share a pool of cell.Size objects and hold each for
// cell.Hold of work. It reports the throughput (ops/s) and, from one take
// in eight, the 50th, 99th and 99.9th percentiles and the longest of the
// time from asking for an object to holding it (p50-ns, p99-ns, p99.9-ns,
// max-ns); and, beside them, the 99.9th percentile of the time the Go
// scheduler kept goroutines runnable before running them meanwhile
// (sched-p99.9-ns), the least a take that waits for a wake-up can wait.
func Contended(b *testing.B, c pools.Contender, cell Cell) {
	p := newPool(b, c, cell.Size, &pools.Factory{})
	defer closePool(b, c, p)
	ctx := context.Background()
	iters := 0
	if cell.Hold > 0 {
		iters = spin.Iterations(cell.Hold)
	}
	takers := make([]taker, cell.Goroutines)
	for i := range takers {
		takers[i].iters = iters
	}
	sched := schedlat.Take()
	split.Run(b, len(takers), func(i, n int) { takers[i].run(ctx, p, n) })
	b.StopTimer()
	sched = schedlat.Take().Since(sched)

	var all hist.Histogram
	for i := range takers {
		if err := takers[i].err; err != nil {
			b.Fatalf("%s: %v", c.Name, err)
		}
		all.Merge(&takers[i].h)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	all.Report(b)
	if sched.Count() > 0 {
		b.ReportMetric(sched.Quantile(0.999)*1e9, "sched-p99.9-ns")
	}
}

// The slow-create workload.
const (
	SlowCreateSize   = 16
	SlowCreateDelay  = 2 * time.Millisecond
	SlowCreateTakers = 256
	SlowCreateHold   = time.Millisecond
)

// SlowCreate, b.N times, builds an empty pool of SlowCreateSize objects
// whose creates take SlowCreateDelay, lets SlowCreateTakers goroutines take
// an object at once, hold it for SlowCreateHold (a sleep, as a query would
// wait) and give it back, and times until the last has given it back.
//
// The holds make the pool need all its objects: a pool that creates them
// in parallel, up to its size, finishes in about one create plus
// SlowCreateTakers/SlowCreateSize holds, the ideal; one that creates one
// at a time starts with one object and gains one per create. It reports
// the wall time (wall-ms), the wall time over that ideal computed from the
// slowest create and the mean hold measured in the same iteration
// (x-ideal), the longest any taker waited for its object (max-wait-ms),
// and how many objects the pool created (created).
func SlowCreate(b *testing.B, c pools.Contender) {
	ctx := context.Background()
	var wall, worstWait time.Duration
	var ratio, created float64
	waits := make([]time.Duration, SlowCreateTakers)
	holds := make([]time.Duration, SlowCreateTakers)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		f := &pools.Factory{CreateDelay: SlowCreateDelay}
		p := newPool(b, c, SlowCreateSize, f)
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		var t0 time.Time
		errs := make([]error, SlowCreateTakers)
		for i := range SlowCreateTakers {
			ready.Add(1)
			done.Go(func() {
				ready.Done()
				<-start
				errs[i] = p.Do(ctx, func(*pools.Object) {
					held := time.Now()
					waits[i] = held.Sub(t0)
					time.Sleep(SlowCreateHold)
					holds[i] = time.Since(held)
				})
			})
		}
		ready.Wait()
		b.StartTimer()
		t0 = time.Now()
		close(start)
		done.Wait()
		took := time.Since(t0)
		b.StopTimer()
		closePool(b, c, p)
		for _, err := range errs {
			if err != nil {
				b.Fatalf("%s: %v", c.Name, err)
			}
		}
		var held time.Duration
		for i := range waits {
			worstWait = max(worstWait, waits[i])
			held += holds[i]
		}
		ideal := f.LongestCreate() + held/SlowCreateSize
		wall += took
		ratio += float64(took) / float64(ideal)
		created += float64(f.Created())
		b.StartTimer()
	}
	b.ReportMetric(wall.Seconds()*1e3/float64(b.N), "wall-ms")
	b.ReportMetric(worstWait.Seconds()*1e3, "max-wait-ms")
	b.ReportMetric(ratio/float64(b.N), "x-ideal")
	b.ReportMetric(created/float64(b.N), "created")
}

// The fairness workload.
const (
	FairnessSize       = 4
	FairnessGoroutines = 64
	FairnessTakes      = 16 // per goroutine and round, on average
	FairnessHold       = 50 * time.Microsecond
)

// Fairness runs b.N rounds in which FairnessGoroutines goroutines share a
// pool of FairnessSize objects and draw FairnessGoroutines×FairnessTakes
// tickets from a common counter, each ticket one take holding the object
// for FairnessHold. A fair pool lets every goroutine make about
// FairnessTakes takes.
//
// A holder waits out FairnessHold yielding its processor, as a holder
// waiting on a database would, rather than burning it: with more holders
// than processors, burning would starve the goroutines that have yet to
// ask, and measure the scheduler instead of the pool. It does not sleep,
// since a sleep this short lasts a millisecond or more here. It reports the fewest and most takes one goroutine
// made in a round (min-takes, max-takes: the worst over the rounds), the
// 99th percentile and the longest wait for an object (p99-wait-us,
// max-wait-us).
func Fairness(b *testing.B, c pools.Contender) {
	p := newPool(b, c, FairnessSize, &pools.Factory{})
	defer closePool(b, c, p)
	ctx := context.Background()
	var waits hist.Histogram
	minTakes, maxTakes := int64(1<<62), int64(0)
	type goroutine struct {
		h     hist.Histogram
		takes int64
		err   error
	}
	gs := make([]goroutine, FairnessGoroutines)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var tickets atomic.Int64
		tickets.Store(FairnessGoroutines * FairnessTakes)
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		for i := range gs {
			g := &gs[i]
			g.takes = 0
			ready.Add(1)
			done.Go(func() {
				ready.Done()
				<-start
				var t0 time.Time
				hold := func(*pools.Object) {
					held := time.Now()
					g.h.Record(held.Sub(t0))
					for time.Since(held) < FairnessHold {
						runtime.Gosched()
					}
				}
				for tickets.Add(-1) >= 0 {
					t0 = time.Now()
					if err := p.Do(ctx, hold); err != nil {
						g.err = err
						return
					}
					g.takes++
				}
			})
		}
		ready.Wait()
		b.StartTimer()
		close(start)
		done.Wait()
		b.StopTimer()
		for i := range gs {
			if gs[i].err != nil {
				b.Fatalf("%s: %v", c.Name, gs[i].err)
			}
			minTakes = min(minTakes, gs[i].takes)
			maxTakes = max(maxTakes, gs[i].takes)
		}
		b.StartTimer()
	}
	for i := range gs {
		waits.Merge(&gs[i].h)
	}
	b.ReportMetric(float64(minTakes), "min-takes")
	b.ReportMetric(float64(maxTakes), "max-takes")
	b.ReportMetric(float64(waits.Quantile(0.99))/1e3, "p99-wait-us")
	b.ReportMetric(float64(waits.Max())/1e3, "max-wait-us")
}
