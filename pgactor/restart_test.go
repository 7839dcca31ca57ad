package pgactor

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestServerRestart restarts, then crashes, a private PostgreSQL under a
// load of senders and workers, and checks that both recover and that no
// acknowledged task is lost: each runs, and the queue ends empty with the
// counters adding up.
func TestServerRestart(t *testing.T) {
	testenv.CheckGoroutines(t)
	srv := testenv.PrivatePostgres(t)
	p := newPool(t, srv.DSN(), 8)
	r := &rig{t: t, dsn: srv.DSN(), pool: p, schema: newSchema(t, p)}
	var ran ledger[uint64]
	a := start(r, "restarted", func(ctx context.Context, task actor.Task[int]) error {
		ran.add(task.ID)
		return nil
	}, Config[int]{Workers: 4, Lease: time.Second, PollInterval: 100 * time.Millisecond, Logger: quiet(t)})

	var mu sync.Mutex
	acked := map[uint64]bool{}
	var failed atomic.Int64
	stop := make(chan struct{})
	var senders sync.WaitGroup
	for range 3 {
		senders.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				var ids []uint64
				var err error
				if i%4 == 0 {
					ids, err = a.SendBatch(ctx, []int{i, i + 1, i + 2})
				} else {
					var id uint64
					id, err = a.Send(ctx, i)
					ids = []uint64{id}
				}
				cancel()
				if err != nil {
					failed.Add(1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				mu.Lock()
				for _, id := range ids {
					acked[id] = true
				}
				mu.Unlock()
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	for _, fault := range []struct {
		name string
		do   func()
	}{{"restart", srv.Restart}, {"crash", func() { srv.Crash(); srv.Start() }}} {
		before := count()
		eventually(t, 30*time.Second, "sends acknowledged before the "+fault.name, func() bool { return count() >= before+200 })
		fault.do()
		after := count()
		eventually(t, 60*time.Second, "sends acknowledged after the "+fault.name, func() bool { return count() >= after+200 })
	}
	close(stop)
	senders.Wait()
	eventually(t, 60*time.Second, "every acknowledged task ran", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for id := range acked {
			if ran.times(id) == 0 {
				return false
			}
		}
		return true
	})
	eventually(t, 60*time.Second, "the queue is empty", func() bool {
		s, err := a.Stats(context.Background())
		return err == nil && s.Queued+s.Running+s.Scheduled+s.Retrying == 0
	})
	s := stats(t, a)
	if s.DeadLettered != 0 || s.Completed != s.Accepted || s.Accepted < uint64(count()) {
		t.Errorf("stats %+v with %d acknowledged", s, count())
	}
	t.Logf("%d acknowledged, %d accepted, %d sends failed during the outages, %d runs (%d repeated)", count(), s.Accepted, failed.Load(), ran.count(), ran.count()-len(ran.seen))
}
