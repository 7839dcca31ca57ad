package queues

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Scale sizes the cells. Full is the issue's; Quick keeps one run of every
// cell within seconds, so that CI runs the code without measuring.
type Scale struct {
	// BurnDown is how many tasks the burn-down cell pre-inserts.
	BurnDown int
	// Workers are the worker counts the throughput cells try, for each
	// queue; the report keeps each queue's best.
	Workers []int
	// Sustained is how long the sustained cell runs, and Backlog how many
	// tasks its producers keep waiting.
	Sustained time.Duration
	Backlog   int
	// Rate is the latency cell's sends per second, for LatencyFor, by
	// LatencyWorkers workers.
	Rate           int
	LatencyFor     time.Duration
	LatencyWorkers int
	// Producers is how many goroutines send one task per call in the
	// producers cell, for ProducersFor.
	Producers    int
	ProducersFor time.Duration
	// Processes are the numbers of worker processes the processes cell
	// compares, each with ProcessWorkers workers, on BurnDown tasks.
	Processes      []int
	ProcessWorkers int
	// RecoveryCap is how long the recovery cell waits for the killed
	// worker's task before it gives up and reports the cap.
	RecoveryCap time.Duration
	// RecoveryRiver runs River's recovery cells, which take at least 30 s
	// each (its rescuer runs every 30 s).
	RecoveryRiver bool
}

// The scales.
var (
	Full = Scale{
		BurnDown: 100_000, Workers: []int{100, 500, 2000},
		Sustained: 15 * time.Second, Backlog: 20_000,
		Rate: 1000, LatencyFor: 10 * time.Second, LatencyWorkers: 100,
		Producers: 16, ProducersFor: 15 * time.Second,
		Processes: []int{1, 4}, ProcessWorkers: 500,
		RecoveryCap: time.Minute, RecoveryRiver: true,
	}
	Quick = Scale{
		BurnDown: 1000, Workers: []int{100},
		Sustained: time.Second, Backlog: 1000,
		Rate: 200, LatencyFor: time.Second, LatencyWorkers: 20,
		Producers: 4, ProducersFor: time.Second,
		Processes: []int{1, 2}, ProcessWorkers: 50,
		RecoveryCap: 30 * time.Second,
	}
)

// drainPoll is how often a cell asks whether the queue is drained once the
// handlers have seen every task.
const drainPoll = 2 * time.Millisecond

// BurnDown pre-inserts n no-op tasks, starts workers on them and returns
// how many tasks per second were worked, from the start of the workers to
// the last completion committed.
func BurnDown(ctx context.Context, q Queue, n, workers int) (perSec float64, err error) {
	payloads := make([]int64, n)
	if err := q.InsertBatch(ctx, payloads); err != nil {
		return 0, err
	}
	var seen atomic.Int64
	all := make(chan struct{})
	begin := time.Now()
	stop, err := q.Start(context.WithoutCancel(ctx), workers, func(int64) {
		if seen.Add(1) == int64(n) {
			close(all)
		}
	})
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, stop(context.WithoutCancel(ctx))) }()
	select {
	case <-all:
	case <-ctx.Done():
		return 0, fmt.Errorf("burn-down: %d of %d tasks worked: %w", seen.Load(), n, ctx.Err())
	}
	if err := waitDrained(ctx, q); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(begin).Seconds(), nil
}

func waitDrained(ctx context.Context, q Queue) error {
	for {
		done, err := q.Drained(ctx)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the completions to commit: %w", ctx.Err())
		case <-time.After(drainPoll):
		}
	}
}

// SustainedResult is what the sustained cell measures.
type SustainedResult struct {
	PerSec     float64 // tasks worked per second while producers inserted
	StartBytes int64   // the tables' size once the backlog was inserted
	EndBytes   int64   // and when the run ended
	PeakBytes  int64   // and the largest of the sizes sampled meanwhile
}

// peakPoll is how often a cell samples the size of the queue's tables.
const peakPoll = 500 * time.Millisecond

// samplePeak samples q's tables' size every peakPoll until the returned
// function is called, which returns the largest size seen, that call's
// included. A queue may shrink its tables, as VACUUM does when it cuts
// off empty pages, so the size at the end can hide how big they got.
func samplePeak(ctx context.Context, q Queue) (stop func() (int64, error)) {
	var (
		peak atomic.Int64
		errc = make(chan error, 1)
		done = make(chan struct{})
	)
	sample := func() error {
		b, err := q.TableBytes(ctx)
		if err == nil && b > peak.Load() {
			peak.Store(b)
		}
		return err
	}
	go func() {
		t := time.NewTicker(peakPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				errc <- sample()
				return
			case <-t.C:
				if err := sample(); err != nil && ctx.Err() == nil {
					<-done
					errc <- err
					return
				}
			}
		}
	}()
	return func() (int64, error) {
		close(done)
		err := <-errc
		return peak.Load(), err
	}
}

// Sustained inserts a backlog of tasks, then for d runs workers while a
// producer keeps the backlog topped up in batches, as riverbench's
// continuous mode does, and returns the tasks worked per second and the
// size of the queue's tables at the start and the end.
func Sustained(ctx context.Context, q Queue, d time.Duration, backlog, workers int) (res SustainedResult, err error) {
	if err := q.InsertBatch(ctx, make([]int64, backlog)); err != nil {
		return res, err
	}
	if res.StartBytes, err = q.TableBytes(ctx); err != nil {
		return res, err
	}
	var worked atomic.Int64
	inserted := int64(backlog)
	stop, err := q.Start(context.WithoutCancel(ctx), workers, func(int64) { worked.Add(1) })
	if err != nil {
		return res, err
	}
	peak := samplePeak(ctx, q)
	begin := time.Now()
	end := begin.Add(d)
	batch := make([]int64, min(backlog, insertChunk))
	for time.Now().Before(end) && ctx.Err() == nil {
		if inserted-worked.Load() >= int64(backlog) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err = q.InsertBatch(ctx, batch); err != nil {
			break
		}
		inserted += int64(len(batch))
	}
	done := worked.Load()
	elapsed := time.Since(begin)
	err = errors.Join(err, stop(context.WithoutCancel(ctx)))
	peakBytes, perr := peak()
	res.PeakBytes, err = peakBytes, errors.Join(err, perr)
	if err != nil {
		return res, err
	}
	res.PerSec = float64(done) / elapsed.Seconds()
	res.EndBytes, err = q.TableBytes(ctx)
	return res, err
}

// ProducersResult is what the producers cell measures.
type ProducersResult struct {
	SentPerSec   float64 // tasks the producers sent per second
	WorkedPerSec float64 // tasks whose handlers began per second, over the same time
	Backlog      int64   // tasks sent whose handlers had not begun when the producers stopped
	PeakBytes    int64   // the tables' largest size sampled meanwhile
}

// BacklogSeconds is the backlog the producers left, in seconds of the
// workers' rate: under a second means the workers kept pace.
func (r ProducersResult) BacklogSeconds() float64 {
	if r.WorkedPerSec == 0 {
		return 0
	}
	return float64(r.Backlog) / r.WorkedPerSec
}

// Producers starts workers on an empty queue, then for d has producers
// goroutines each send one task per call, as the handlers of a web
// service would, and returns how fast they sent, how fast the workers
// worked, how many tasks were left waiting at the end, and how big the
// tables got.
func Producers(ctx context.Context, q Queue, producers int, d time.Duration, workers int) (res ProducersResult, err error) {
	var sent, worked atomic.Int64
	stop, err := q.Start(context.WithoutCancel(ctx), workers, func(int64) { worked.Add(1) })
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stop(context.WithoutCancel(ctx))) }()
	peak := samplePeak(ctx, q)
	begin := time.Now()
	sendCtx, cancel := context.WithDeadline(ctx, begin.Add(d))
	defer cancel()
	errc := make(chan error, producers)
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for sendCtx.Err() == nil {
				if err := q.Send(sendCtx, 0); err != nil {
					if sendCtx.Err() == nil {
						errc <- err
					}
					return
				}
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	res.Backlog = sent.Load() - worked.Load()
	res.SentPerSec = float64(sent.Load()) / elapsed.Seconds()
	res.WorkedPerSec = float64(worked.Load()) / elapsed.Seconds()
	res.PeakBytes, err = peak()
	select {
	case e := <-errc:
		err = errors.Join(fmt.Errorf("producers: %w", e), err)
	default:
	}
	return res, err
}

// LatencyResult is what the latency cell measures.
type LatencyResult struct {
	P50, P99 time.Duration // from the call to send to the handler's start
	Sent     int
}

// latencySenders is how many goroutines send in the latency cell, so that
// a slow commit delays only its own send, not the schedule.
const latencySenders = 16

// latencyWarmUp is how many tasks the latency cell runs before it measures.
const latencyWarmUp = 20

// Latency sends rate tasks per second for d, one statement each, by
// latencySenders goroutines fed on a fixed schedule, to workers started
// beforehand, and returns the percentiles of the time from the call to
// send to the start of the handler, over every task.
func Latency(ctx context.Context, q Queue, rate int, d time.Duration, workers int) (res LatencyResult, err error) {
	total := int(float64(rate) * d.Seconds())
	var (
		mu     sync.Mutex
		lats   = make([]time.Duration, 0, total)
		all    = make(chan struct{})
		warmed = make(chan struct{}, latencyWarmUp)
	)
	stop, err := q.Start(context.WithoutCancel(ctx), workers, func(sentAt int64) {
		if sentAt == 0 {
			warmed <- struct{}{}
			return
		}
		lat := time.Duration(time.Now().UnixNano() - sentAt)
		mu.Lock()
		lats = append(lats, lat)
		if len(lats) == total {
			close(all)
		}
		mu.Unlock()
	})
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stop(context.WithoutCancel(ctx))) }()
	// A few tasks run before the measured ones, so that what is measured
	// is the steady state and not the connections being opened.
	for range latencyWarmUp {
		if err := q.Send(ctx, 0); err != nil {
			return res, err
		}
	}
	for range latencyWarmUp {
		select {
		case <-warmed:
		case <-ctx.Done():
			return res, fmt.Errorf("latency: warm-up tasks did not run: %w", ctx.Err())
		}
	}

	tickets := make(chan struct{}, total)
	errc := make(chan error, latencySenders)
	var wg sync.WaitGroup
	for range latencySenders {
		wg.Go(func() {
			for range tickets {
				if err := q.Send(ctx, time.Now().UnixNano()); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	interval := time.Second / time.Duration(rate)
	begin := time.Now()
	for i := range total {
		if wait := time.Until(begin.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		tickets <- struct{}{}
	}
	close(tickets)
	wg.Wait()
	select {
	case err := <-errc:
		return res, err
	default:
	}
	select {
	case <-all:
	case <-ctx.Done():
		return res, fmt.Errorf("latency: not every task ran: %w", ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lats)
	return LatencyResult{P50: lats[len(lats)/2], P99: lats[len(lats)*99/100], Sent: total}, nil
}
