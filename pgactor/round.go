package pgactor

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// A round is one batch of the pump: the completions and give-backs the
// workers handed in, the heartbeat when it is due, and a fetch for the
// workers it reserved — one round trip and one commit. buildRound queues
// its statements, and applyRound, once the batch has committed, applies
// what they did; failRound takes a failed round back.
type round struct {
	completions, giveBacks []*settling
	heartbeat              bool
	beat                   []*lease // with heartbeat, the leases it renews: all but those settled by it or by the rounds in flight
	fromIdle               int      // idle workers reserved for the fetched tasks
	want                   int      // tasks to fetch; 0 for none
	spare                  int      // places held in pending for new workers
	wakes                  int      // the pump's count of wake-ups when it made the round

	// What buildRound queued, and the batch's rows fill in.
	batch     *pgx.Batch
	completed map[int64]int32 // the completions committed: task id to its lease's fencing token
	held      map[int64]bool  // the leases of beat found still held, by task id: canceled or not
	fetched   []*lease
}

// runRound builds rd's batch, sends it, and once it has committed applies
// what it did. It returns how many tasks it fetched.
func (a *Actor[T]) runRound(rd *round) (int, error) {
	a.buildRound(rd)
	sent := time.Now()
	if rd.batch.Len() > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), a.set.lease)
		err := a.store.runBatch(ctx, rd.batch)
		cancel()
		if err != nil {
			return 0, err
		}
	}
	a.applyRound(rd, sent)
	return len(rd.fetched), nil
}

// buildRound queues rd's statements on its batch.
func (a *Actor[T]) buildRound(rd *round) {
	rd.batch = &pgx.Batch{}
	rd.completed = make(map[int64]int32, len(rd.completions))
	if len(rd.completions) > 0 {
		a.store.complete(rd.batch, leasesOf(rd.completions), rd.completed)
	}
	if len(rd.giveBacks) > 0 {
		a.store.giveBack(rd.batch, leasesOf(rd.giveBacks))
	}
	rd.held = make(map[int64]bool)
	if len(rd.beat) > 0 {
		a.store.heartbeat(rd.batch, rd.beat, a.set.lease, rd.held)
	}
	if rd.want > 0 {
		a.store.fetch(rd.batch, rd.want, a.set.lease, &rd.fetched)
	}
}

// renewable returns the leases this instance holds but those whose ids
// are in unrenewed: the leases a heartbeat renews.
func (a *Actor[T]) renewable(unrenewed map[int64]bool) []*lease {
	a.mu.Lock()
	defer a.mu.Unlock()
	var beat []*lease
	for id, l := range a.leases {
		if !unrenewed[id] {
			beat = append(beat, l)
		}
	}
	return beat
}

// addSettling adds to ids the ids of the leases rd settles: those it
// completes and those it gives back.
func (rd *round) addSettling(ids map[int64]bool) {
	for _, s := range rd.completions {
		ids[s.l.id] = true
	}
	for _, s := range rd.giveBacks {
		ids[s.l.id] = true
	}
}

// leasesOf returns the leases of group.
func leasesOf(group []*settling) []*lease {
	leases := make([]*lease, len(group))
	for i, s := range group {
		leases[i] = s.l
	}
	return leases
}

// applyRound applies what rd did, its batch sent at sent and committed:
// renews the leases the heartbeat found, forgets those given back, takes
// the leases of the fetched tasks, replies to the completing workers and
// hands out the fetched tasks — the completing workers first, then the
// reserved idle workers, then new workers.
func (a *Actor[T]) applyRound(rd *round, sent time.Time) {
	if rd.heartbeat {
		a.applyHeartbeat(sent, rd.beat, rd.held)
	}
	for _, s := range rd.giveBacks {
		a.forget(s.l)
	}
	a.hold(rd.fetched, sent)
	if len(rd.fetched) > 0 {
		fault(pointFetched)
	}
	next := rd.fetched
	for _, s := range rd.completions {
		o := outcome{}
		if rd.completed[s.l.id] != s.l.token {
			o.err = errRefused
		}
		if len(next) > 0 {
			o.next, next = next[0], next[1:]
		}
		s.reply <- o
	}
	a.dispatch(next, rd.fromIdle, rd.spare)
}

// failRound takes back a round whose batch failed, as a whole: it returns
// the completions to retry while their leases may still be this
// process's (all of them when final is false and none past), and the
// give-backs; the reserved workers go back to idle, and the leases are
// checked against their deadlines. A final round — the last, at Close —
// retries nothing: its completions fail, and its give-backs are
// forgotten, their tasks due again once their leases run out.
func (a *Actor[T]) failRound(rd *round, err error, final bool) (completions, giveBacks []*settling) {
	a.mu.Lock()
	a.idle += rd.fromIdle
	a.pending -= rd.spare
	now := time.Now()
	for _, s := range rd.completions {
		if final || now.After(s.l.deadline) {
			s.reply <- outcome{err: err}
		} else {
			completions = append(completions, s)
		}
	}
	a.mu.Unlock()
	if rd.heartbeat {
		a.applyHeartbeat(now, nil, nil)
	}
	if final {
		for _, s := range rd.giveBacks {
			a.forget(s.l)
		}
		if len(rd.giveBacks) > 0 {
			a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: could not give tasks back; they run again once their leases run out",
				slog.String("actor", a.name), slog.Int("tasks", len(rd.giveBacks)), slog.Any("error", err))
		}
		return nil, nil
	}
	return completions, rd.giveBacks
}
