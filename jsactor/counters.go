package jsactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// counters are what this process has counted and not yet added to the
// counter stream.
type counters struct {
	n [len(counterNames)]atomic.Uint64
}

func (c *counters) add(k counter, n uint64) { c.n[k].Add(n) }

// flushCounters adds this process's counts to the counter stream every
// FlushInterval, and once more at Close.
func (a *Actor[T]) flushCounters() {
	defer a.bgWG.Done()
	tick := time.NewTicker(a.set.flushEach)
	defer tick.Stop()
	failing := false // log a run of failures once
	for {
		select {
		case <-a.stopCtx.Done():
			return // Close flushes once the workers are done
		case <-tick.C:
			// Not ended by Close: a count whose publish Close cut short may
			// have been stored, and Close would add it again
			// (TestCloseDuringFlushCountsOnce).
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := a.flush(ctx)
			cancel()
			if err != nil && !failing && a.stopCtx.Err() == nil {
				a.log.Warn("could not add the counters to the counter stream; keeping them for the next tries", "error", err)
			}
			failing = err != nil
		}
	}
}

// flush adds each counter's count to its subject in the counter stream;
// a count not acknowledged is kept for the next flush. A count whose
// acknowledgement was lost after the server stored it is counted twice:
// counters are the one figure of Stats that a fault can make too high.
func (a *Actor[T]) flush(ctx context.Context) error {
	var errs []error
	for i, name := range counterNames {
		n := a.counts.n[i].Swap(0)
		if n == 0 {
			continue
		}
		try, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := a.js.PublishMsg(try, a.l.incr(counter(i), n))
		cancel()
		if err != nil {
			a.counts.n[i].Add(n)
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// flushAfterClose adds the counters to the counter stream at once when
// Close has added them for the last time: a send after Close, or during
// it, counts its tasks after that. A count not stored is kept for the
// next send.
func (a *Actor[T]) flushAfterClose() {
	if !a.flushed.Load() {
		return // Close's flush, or the flusher's, adds them
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.flush(ctx)
}

// addCounts adds counts to the actor's counters at once, for an Admin,
// which keeps none of its own to flush. A count not stored is lost, and
// logged nowhere: counters are not worth failing an operation for.
func addCounts(ctx context.Context, js jetstream.JetStream, l layout, counts map[counter]uint64) {
	for k, n := range counts {
		_, _ = js.PublishMsg(ctx, l.incr(k, n))
	}
}

// incr returns the message that adds n to counter k of l.
func (l layout) incr(k counter, n uint64) *nats.Msg {
	return &nats.Msg{Subject: l.countSubject(counterNames[k]), Header: nats.Header{hdrIncr: []string{"+" + strconv.FormatUint(n, 10)}}}
}

// readCounter reads a counter's total from the counter stream.
func readCounter(ctx context.Context, st jetstream.Stream, subject string) (uint64, error) {
	m, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v struct {
		Val string `json:"val"`
	}
	if err := json.Unmarshal(m.Data, &v); err != nil {
		return 0, fmt.Errorf("counter %s holds %q, not a count: %w", subject, m.Data, err)
	}
	n, err := strconv.ParseUint(v.Val, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("counter %s holds %q, not a count: %w", subject, v.Val, err)
	}
	return n, nil
}
