package jsactor

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Stats is a snapshot of a durable actor, in the shape of pgactor.Stats.
// The counters and the task gauges cover every process running the
// actor; Workers, Busy and Idle are this process's. See the package
// documentation for which figures are exact.
type Stats struct {
	// Counters since the actor's counter stream was created, as the
	// processes have added them (every Config.FlushInterval, and at Close).
	Accepted     uint64 // tasks stored by sends, and by replays
	Completed    uint64 // tasks whose handler succeeded and whose acknowledgement the server confirmed; see the package documentation for one it never did
	DeadLettered uint64 // tasks moved to the dead letters, deleted since or not
	Failed       uint64 // failed attempts
	Retried      uint64 // retries scheduled
	Lost         uint64 // runs whose worker was lost: their task was delivered again after its lease
	Replayed     uint64 // dead letters replayed; included in Accepted

	// Task gauges, read from the consumers.
	Queued    int // ready and not yet delivered to a worker
	Scheduled int // sent to run later (RunAt, After) or snoozed, not yet due
	Running   int // delivered to a worker and not yet acknowledged, lost runs waiting to be delivered again included
	Retrying  int // waiting for their backoff
	// DeadLetters is how many dead letters are stored now.
	DeadLetters int
	// OldestQueued is how long the oldest ready task not yet delivered
	// has been stored; 0 when none waits.
	OldestQueued time.Duration
	// Paused is whether the run consumer is paused (Pause): no process
	// takes the actor's tasks until Resume.
	Paused bool

	// This process's workers.
	Workers int
	Busy    int
	Idle    int
}

// Stats reads the actor's counters and gauges.
func (a *Actor[T]) Stats(ctx context.Context) (Stats, error) {
	s, err := readStats(ctx, a.js, a.l)
	if err != nil {
		return s, err
	}
	a.mu.Lock()
	s.Workers = 0
	if a.handler != nil && !a.closed {
		s.Workers = a.set.workers
	}
	s.Busy = a.busy
	a.mu.Unlock()
	s.Idle = max(s.Workers-s.Busy, 0)
	return s, nil
}

// ReadStats reads the counters and gauges of the actor named name under
// prefix ("" for DefaultPrefix) on the server nc is connected to, without
// an Actor: for a collector or a command. It fails with ErrUnknownActor
// when the actor's streams do not exist. Workers, Busy and Idle are zero.
func ReadStats(ctx context.Context, nc *nats.Conn, prefix, name string) (Stats, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return Stats{}, fmt.Errorf("jsactor: stats of %q: %w", name, err)
	}
	return readStats(ctx, js, layout{prefix: prefix, actor: name})
}

func readStats(ctx context.Context, js jetstream.JetStream, l layout) (Stats, error) {
	var s Stats
	fail := func(err error) (Stats, error) { return Stats{}, unknown(l, fmt.Errorf("stats: %w", err)) }
	work, err := js.Stream(ctx, l.workStream())
	if err != nil {
		return fail(err)
	}
	infos := map[string]*jetstream.ConsumerInfo{}
	for _, name := range []string{consumerRun, consumerDelayed, consumerBackoff} {
		c, err := work.Consumer(ctx, name)
		if err != nil {
			return fail(err)
		}
		infos[name] = c.CachedInfo()
	}
	run := infos[consumerRun]
	s.Queued = int(run.NumPending)
	s.Running = run.NumAckPending
	s.Paused = run.Paused
	s.Scheduled = int(infos[consumerDelayed].NumPending) + infos[consumerDelayed].NumAckPending
	s.Retrying = int(infos[consumerBackoff].NumPending) + infos[consumerBackoff].NumAckPending
	if s.Queued > 0 {
		m, err := work.GetMsg(ctx, run.Delivered.Stream+1, jetstream.WithGetMsgSubject(l.places(placeReady)))
		if err == nil {
			s.OldestQueued = max(time.Since(m.Time), 0)
		}
	}
	dead, err := js.Stream(ctx, l.deadStream())
	if err != nil {
		return fail(err)
	}
	s.DeadLetters = int(dead.CachedInfo().State.Msgs)
	counts, err := js.Stream(ctx, l.countStream())
	if err != nil {
		return fail(err)
	}
	for _, c := range []struct {
		k  counter
		to *uint64
	}{
		{countAccepted, &s.Accepted}, {countCompleted, &s.Completed}, {countDeadLettered, &s.DeadLettered},
		{countFailed, &s.Failed}, {countRetried, &s.Retried}, {countLost, &s.Lost}, {countReplayed, &s.Replayed},
	} {
		if *c.to, err = readCounter(ctx, counts, l.countSubject(counterNames[c.k])); err != nil {
			return fail(err)
		}
	}
	return s, nil
}
