package pgactor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestStatsIdentity reads Stats over and over while senders, two actor
// instances with workers, retries, dead letters, replays and maintenance's
// folds change the tables, and checks the identity in every snapshot, then
// the totals once everything has run.
func TestStatsIdentity(t *testing.T) {
	r := newRig(t)
	handler := func(ctx context.Context, task actor.Task[int]) error {
		switch {
		case task.Payload%10 == 0:
			return actor.Permanent(errors.New("permanent"))
		case task.Payload%10 == 1 && task.Attempt == 1:
			return errors.New("once")
		}
		return nil
	}
	cfg := Config[int]{Workers: 3, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: 20 * time.Millisecond}
	a := start(r, "identity", handler, cfg)
	start(r, "identity", handler, cfg)

	const senders, each = 4, 150
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				var err error
				switch p := s*each + i; i % 3 {
				case 0:
					_, err = a.Send(context.Background(), p)
				case 1:
					_, err = a.Send(context.Background(), p, After(time.Duration(i%5)*10*time.Millisecond))
				default:
					tx, berr := r.pool.Begin(context.Background())
					if berr != nil {
						t.Error(berr)
						return
					}
					_, err = a.SendTx(context.Background(), tx, p)
					if err == nil {
						err = tx.Commit(context.Background())
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() { // replays dead letters as they come
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			letters, err := a.DeadLetters(context.Background(), LetterFilter{Limit: 10})
			if err != nil {
				t.Error(err)
				return
			}
			for _, l := range letters {
				if l.Task.Payload%20 == 0 { // replay half of them, once: they fail again
					a.Replay(context.Background(), l.Task.ID)
				}
			}
		}
	})
	readers.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// Fold the counters under the readers, as maintenance does.
			if err := a.store.fold(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	snapshots := 0
	for sent := false; !sent; {
		sent = waitTimeout(&wg, 0)
		stats(t, a)
		snapshots++
	}
	close(done)
	readers.Wait()
	eventually(t, 30*time.Second, "every task ended", func() bool {
		s := stats(t, a)
		snapshots++
		return s.Queued+s.Scheduled+s.Running+s.Retrying == 0
	})
	s := stats(t, a)
	const total = senders * each
	if s.Accepted != total+s.Replayed || s.Completed != total-total/10 || s.DeadLettered != total/10+s.Replayed {
		t.Errorf("after %d snapshots: %+v", snapshots, s)
	}
	t.Logf("identity held in %d snapshots; %d replayed", snapshots, s.Replayed)
}

// waitTimeout reports whether wg is done within d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	c := make(chan struct{})
	go func() {
		wg.Wait()
		close(c)
	}()
	select {
	case <-c:
		return true
	case <-time.After(d):
		return false
	}
}
