package jsactor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/leakcheck"
	"github.com/actorpool/actorpool/jsactor/jsserver"
)

// TestClusterLeaderKill runs the actor with Replicas 3 on a three-node
// cluster, two actors working and one sending without pause, and shuts the
// server that leads the work stream down in the middle. Sends that fail
// while the others elect a leader are sent again with the same message ID,
// so that each is stored once; every acknowledged send must run, on
// workers that go on after the shutdown.
func TestClusterLeaderKill(t *testing.T) {
	leakcheck.Check(t)
	cl, err := jsserver.StartCluster(3, jsserver.Options{Name: "leaderkill", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	urls := cl.ClientURLs()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	config := func(workers int) Config[int] {
		return Config[int]{
			Workers: workers, Replicas: 3, Lease: 2 * time.Second, MaxAttempts: 20, MaxLost: 20,
			FlushInterval: 100 * time.Millisecond, Logger: log,
		}
	}
	const name = "leaderkill"
	sender, err := New(ctx, connect(t, urls), name, nil, config(0))
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, sender)
	work, _, _ := sender.Streams()

	// The workers: two actors, each on a connection of its own, which may
	// be to the server shut down.
	var killed atomic.Bool
	var mu sync.Mutex
	ran := map[uint64]int{}            // runs of each task
	idsOf := map[int]map[uint64]bool{} // the task IDs each payload ran under
	var after [2]int                   // tasks each actor ran after the shutdown
	for i := range after {
		a, err := New(ctx, connect(t, urls), name, func(ctx context.Context, task actor.Task[int]) error {
			mu.Lock()
			defer mu.Unlock()
			ran[task.ID]++
			if idsOf[task.Payload] == nil {
				idsOf[task.Payload] = map[uint64]bool{}
			}
			idsOf[task.Payload][task.ID] = true
			if killed.Load() {
				after[i]++
			}
			return nil
		}, config(4))
		if err != nil {
			t.Fatal(err)
		}
		closeT(t, a)
	}

	// The senders: four, each sending one task after another, each again
	// with its message ID until the stream acknowledges it.
	var ledgerMu sync.Mutex
	ledger := map[int]uint64{} // task ID by payload
	var resent atomic.Int64
	var next atomic.Int64
	stop := make(chan struct{})
	var senders sync.WaitGroup
	for range 4 {
		senders.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1))
				for {
					// Shorter than the actor's own wait for an
					// acknowledgement (5s), for a short test.
					try, cancel := context.WithTimeout(ctx, 2*time.Second)
					t0 := time.Now()
					id, err := sender.Send(try, i, MsgID(fmt.Sprintf("task-%d", i)))
					cancel()
					if err == nil {
						ledgerMu.Lock()
						ledger[i] = id
						ledgerMu.Unlock()
						break
					}
					if ctx.Err() != nil {
						t.Errorf("send %d: not acknowledged before the test's deadline: %v", i, err)
						return
					}
					resent.Add(1)
					t.Logf("send %d failed after %v, to be sent again: %v", i, time.Since(t0).Round(time.Millisecond), err)
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}

	stopSenders := sync.OnceFunc(func() {
		close(stop)
		senders.Wait()
	})
	defer stopSenders() // before the test ends, however it ends

	acked := func() int {
		ledgerMu.Lock()
		defer ledgerMu.Unlock()
		return len(ledger)
	}
	eventually(t, 30*time.Second, "200 sends acknowledged", func() bool { return acked() >= 200 })
	leader := cl.StreamLeader(work)
	if leader == nil {
		t.Fatalf("no server leads stream %s", work)
	}
	killed.Store(true)
	leader.Shutdown()
	shutdown := time.Now()
	var successor *jsserver.Server
	eventually(t, 30*time.Second, "another server leads the work stream", func() bool {
		successor = cl.StreamLeader(work)
		return successor != nil && successor != leader
	})
	t.Logf("%s, which led %s, shut down; %s leads it %v later", leader.Name(), work, successor.Name(), time.Since(shutdown).Round(time.Millisecond))
	before := acked()
	eventually(t, 30*time.Second, "500 sends acknowledged after the new leader's election", func() bool { return acked() >= before+500 })
	stopSenders()

	eventually(t, 45*time.Second, "every acknowledged task ran", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ledger {
			if ran[id] == 0 {
				return false
			}
		}
		return true
	})
	eventually(t, 15*time.Second, "the queue is empty", func() bool {
		s, err := sender.Stats(ctx)
		return err == nil && s.Queued+s.Scheduled+s.Running+s.Retrying+s.DeadLetters == 0
	})

	mu.Lock()
	defer mu.Unlock()
	byID := map[uint64]int{}
	for p, id := range ledger {
		if q, ok := byID[id]; ok {
			t.Errorf("sends %d and %d were both acknowledged as task %d", p, q, id)
		}
		byID[id] = p
	}
	duplicates := 0
	for p, ids := range idsOf {
		if len(ids) > 1 {
			t.Errorf("payload %d was stored as %d tasks, %v: a send retried with its message ID must be stored once", p, len(ids), ids)
		}
	}
	for id, n := range ran {
		if _, ok := byID[id]; !ok {
			t.Errorf("task %d ran, but no send was acknowledged as it", id)
		}
		duplicates += n - 1
	}
	for i, n := range after {
		if n == 0 {
			t.Errorf("actor %d ran no task after the shutdown", i)
		}
	}
	t.Logf("%d acknowledged sends, %d of them sent again; %d duplicate runs; tasks run after the shutdown by each actor: %v",
		len(ledger), resent.Load(), duplicates, after)
}
