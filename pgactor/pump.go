package pgactor

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// The pump is one goroutine per actor instance that runs every statement
// touching many of the instance's leases: it fetches new tasks, commits
// the completions of the workers, renews the leases (the heartbeat), gives
// leases back. Each round sends what is due as one batch — one round
// trip, run by the server as one transaction, so one commit — and while a
// round runs the completions of the workers that finish meanwhile gather
// for the next (group commit). A worker waits until its completion has
// committed, and the same round fetches the task it runs next. The commit,
// not the statements, is what bounds a queue in PostgreSQL; sharing it is
// how a round serves many workers. round.go builds and applies a round,
// fetch.go reserves the workers a fetch is for and hands them their tasks.
//
// The workers' own statements (a retry, a dead letter, a snooze, a Tx
// handler's completion) each lock the one row of their lease, and wait
// for no other task's row while they hold it, so they close no cycle of
// waits with the rounds. An operator's RunNow or Delete can, and runs
// again when PostgreSQL aborts it (runAgain).

// maxGroup bounds how many completions and give-backs one round commits.
const maxGroup = 1000

// The pump keeps Config.Rounds rounds in flight at once, each on a
// connection of its own. While one round's batch runs on the server, the
// next one gathers the completions that came meanwhile and fetches for the
// workers that became idle, so that the server works on both at once: a
// single round at a time leaves all but one of the server's cores idle
// and makes every worker wait for a whole round trip and commit before it
// gets its next task. The rounds never wait on each other's row locks:
// each completes and gives back tasks no other round names; the heartbeat
// names every lease but those that the rounds in flight settle, one
// heartbeat at a time, and a lease handed in while the heartbeat in
// flight renews it is settled by a round after that one (afterBeat), unless
// that heartbeat is still in flight when the next is due; the fetches
// skip locked rows, and come last in their round, which then waits for
// nothing more. Two rounds that shared rows could deadlock,
// PostgreSQL aborting one of them after deadlock_timeout: a statement
// locks its rows in the order its plan visits them — by id from the
// primary key, in the table's order from a scan of it, which the planner
// picks for many ids — and a round's statements lock theirs one after
// another. The heartbeat does not wait for a round alone: under a steady
// load some round is always in flight, and a heartbeat that waited for
// none would wait while the leases of long tasks ran out.

// A settling is a lease a worker hands the pump to settle: its task's
// completion to commit, or the lease to give back.
type settling struct {
	l        *lease
	giveBack bool
	reply    chan outcome // a completion's outcome
}

// An outcome is what the pump tells a worker whose completion it ran: nil,
// errRefused or why it failed, and the worker's next task, if the round
// fetched one for it.
type outcome struct {
	err  error
	next *lease
}

// A pump is the pump goroutine's state.
type pump[T any] struct {
	a *Actor[T]

	// Handed in by the workers, for the next round.
	completions, giveBacks []*settling
	// Handed in by the workers while the heartbeat in flight renews their
	// leases, for a round after it; renewing is the ids of the leases it
	// renews, nil when no heartbeat is in flight or the one in flight is
	// late.
	afterBeat []*settling
	renewing  map[int64]bool

	ready     bool            // the queue may hold due tasks: fetch
	heartbeat bool            // the leases are due for renewal
	stopping  <-chan struct{} // the actor's, until the pump has seen it closed; then nil: it fetches no more
	paused    bool            // a round failed: wait for timer before the next
	backoff   time.Duration   // how long, doubling while rounds fail
	inflight  []*round        // rounds running
	wakes     int             // wake-ups and polls so far, to tell those a round in flight missed
	results   chan roundResult
	beat      *time.Ticker // the heartbeat's
	timer     *time.Timer  // the next poll, or the end of a pause
	expiry    *time.Timer  // when the earliest lease runs out, unless renewed (expireLeases)
}

// runPump is the pump's goroutine.
func (a *Actor[T]) runPump() {
	defer a.bgWG.Done()
	defer close(a.pumpDone)
	p := &pump[T]{
		a:        a,
		ready:    true,
		stopping: a.shut.stopping,
		results:  make(chan roundResult, a.set.rounds),
		beat:     time.NewTicker(a.set.heartbeat),
		timer:    time.NewTimer(time.Hour),
		expiry:   time.NewTimer(a.set.lease),
	}
	defer p.beat.Stop()
	defer p.timer.Stop()
	defer p.expiry.Stop()
	p.run()
}

// run launches rounds until the actor drains, then drains.
func (p *pump[T]) run() {
	for {
		select {
		case <-p.stopping:
			// No more fetches: the idle workers may leave, once the rounds
			// in flight have handed out what they fetched.
			p.finishRounds()
			p.stopping = nil
			close(p.a.tasks)
		case <-p.a.shut.draining:
			p.drain()
			return
		default:
		}
		fetch := p.stopping != nil && p.ready && !p.paused
		beat := p.heartbeat && !p.beating()
		idle := len(p.completions)+len(p.giveBacks) == 0 && !beat && !(fetch && p.a.hasRoom())
		if idle || p.paused || len(p.inflight) == p.a.set.rounds {
			// Nothing to do, a round just failed, or as many rounds run
			// as may.
			p.wait()
			continue
		}
		p.gather()
		p.launch(p.newRound(beat))
	}
}

// wait waits for work, for a round to end, for the heartbeat, for the
// time to poll or try again, or for a lease to run out.
func (p *pump[T]) wait() {
	select {
	case res := <-p.results:
		p.absorb(res)
	case s := <-p.a.settling:
		p.add(s)
	case <-p.beat.C:
		p.heartbeat = true
		if p.beating() {
			// The heartbeat in flight is late: stuck on a row lock, or on
			// a connection that stopped answering, whose round gives up
			// only after a Lease, when the leases it renews have run out.
			// What waits for it goes to the next round, at the risk of the
			// deadlock it waited to avoid — PostgreSQL breaks that after
			// deadlock_timeout, and the round is retried — rather than
			// keeping the completion of a task done until its lease runs
			// out and the task runs again.
			p.stopWaitingForBeat()
		}
	case <-p.a.wake:
		p.ready = true
		p.wakes++
	case <-p.timer.C:
		p.ready, p.paused = true, false
		p.wakes++
	case <-p.expiry.C:
		p.expiry.Reset(p.a.expireLeases())
	case <-p.a.free:
	case <-p.stopping:
	case <-p.a.shut.draining:
	}
}

// add takes in a lease a worker handed in: for the next round, or, when
// the heartbeat in flight renews it, for a round after that.
func (p *pump[T]) add(s *settling) {
	switch {
	case p.renewing[s.l.id]:
		p.afterBeat = append(p.afterBeat, s)
	case s.giveBack:
		p.giveBacks = append(p.giveBacks, s)
	default:
		p.completions = append(p.completions, s)
	}
}

// stopWaitingForBeat hands what waits for the heartbeat in flight to the
// next round, where what is handed in from now on goes too: once the
// heartbeat has ended, or is late.
func (p *pump[T]) stopWaitingForBeat() {
	after := p.afterBeat
	p.afterBeat, p.renewing = nil, nil
	for _, s := range after {
		p.add(s)
	}
}

// gather takes in the leases handed in meanwhile, up to maxGroup.
func (p *pump[T]) gather() {
	for len(p.completions)+len(p.giveBacks) < maxGroup {
		select {
		case s := <-p.a.settling:
			p.add(s)
		default:
			return
		}
	}
}

// newRound returns a round of what was handed in, with the heartbeat if
// beat, and a fetch for the workers it reserves while the pump fetches.
func (p *pump[T]) newRound(beat bool) *round {
	rd := &round{completions: p.completions, giveBacks: p.giveBacks, heartbeat: beat, wakes: p.wakes}
	if beat {
		rd.beat = p.a.renewable(p.settlingIDs(rd))
		p.renewing = make(map[int64]bool, len(rd.beat))
		for _, l := range rd.beat {
			p.renewing[l.id] = true
		}
	}
	if p.stopping != nil && (p.ready || len(p.completions) > 0) {
		rd.fromIdle, rd.want, rd.spare = p.a.reserve(len(p.completions))
	}
	p.completions, p.giveBacks = nil, nil
	if beat {
		p.heartbeat = false
	}
	return rd
}

// settlingIDs returns the ids of the leases that rd and the rounds in
// flight settle: a heartbeat in rd leaves them alone, for their rows are
// being deleted or given back, and renewing them would wait for those
// rounds to commit — or deadlock with them.
func (p *pump[T]) settlingIDs(rd *round) map[int64]bool {
	ids := make(map[int64]bool)
	rd.addSettling(ids)
	for _, r := range p.inflight {
		r.addSettling(ids)
	}
	return ids
}

// beating reports whether a round in flight renews the leases: one
// heartbeat runs at a time.
func (p *pump[T]) beating() bool {
	return slices.ContainsFunc(p.inflight, func(r *round) bool { return r.heartbeat })
}

// A roundResult is what a round in flight reports to the pump.
type roundResult struct {
	rd      *round
	err     error
	fetched int
}

// launch runs rd on a goroutine of its own.
func (p *pump[T]) launch(rd *round) {
	p.inflight = append(p.inflight, rd)
	go func() {
		fetched, err := p.a.runRound(rd)
		p.results <- roundResult{rd: rd, err: err, fetched: fetched}
	}()
}

// absorb takes in the result of a round that was in flight: after a
// heartbeat, the leases handed in that waited for it, for the next round;
// after a failure, its work for the next round and a pause; after a fetch
// that found fewer tasks than it asked for, a wait for a wake-up.
func (p *pump[T]) absorb(res roundResult) {
	a := p.a
	rd := res.rd
	p.inflight = slices.DeleteFunc(p.inflight, func(r *round) bool { return r == rd })
	if rd.heartbeat {
		p.stopWaitingForBeat()
	}
	if res.err != nil {
		completions, giveBacks := a.failRound(rd, res.err, false)
		p.completions, p.giveBacks = append(completions, p.completions...), append(giveBacks, p.giveBacks...)
		p.paused = true
		p.backoff = min(max(2*p.backoff, 50*time.Millisecond), a.set.poll)
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: round failed",
			slog.String("actor", a.name), slog.Duration("retry_in", p.backoff), slog.Any("error", res.err))
		p.timer.Reset(p.backoff)
		return
	}
	p.backoff = 0
	if rd.want == 0 || p.paused {
		return
	}
	if res.fetched < rd.want && rd.wakes == p.wakes {
		// The queue had no more due tasks, and nothing woke the pump
		// since the round was sent (a task committed after its fetch
		// began): wait for a notification, a local send, a retry of
		// this process falling due, or the next poll.
		p.ready = false
		a.mu.Lock()
		d := a.set.poll
		if !a.wakeAt.IsZero() {
			d = min(d, time.Until(a.wakeAt))
		}
		a.mu.Unlock()
		p.timer.Reset(max(d, 0))
	} else {
		p.ready = true
	}
}

// finishRounds waits for the rounds in flight, and absorbs them.
func (p *pump[T]) finishRounds() {
	for len(p.inflight) > 0 {
		p.absorb(<-p.results)
	}
}

// drain finishes what came, once the workers are done or abandoned and no
// more comes: the rounds in flight, then what was handed in, in rounds run
// one at a time.
func (p *pump[T]) drain() {
	p.finishRounds()
	for len(p.a.settling) > 0 || len(p.completions)+len(p.giveBacks) > 0 {
		p.gather()
		rd := &round{completions: p.completions, giveBacks: p.giveBacks}
		if _, err := p.a.runRound(rd); err != nil {
			p.a.failRound(rd, err, true)
		}
		p.completions, p.giveBacks = nil, nil
	}
}
