package jsactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/leakcheck"
	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

// TestClusterUniqueKeyRefused sends with unique keys to an actor with
// Replicas 3 on a three-node cluster: a send refused for its key must not
// stop the stream. Send asked a single server whether the refused send's
// own message ID was stored before by a probe that a replicated stream's
// replicas each took for a failed write, stopping the stream: every send
// after it timed out.
func TestClusterUniqueKeyRefused(t *testing.T) {
	leakcheck.Check(t)
	cl, err := jsserver.StartCluster(3, jsserver.Options{Name: "keyrefused", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	a, err := New(ctx, connect(t, cl.ClientURLs()), "keyrefused", nil, Config[string]{Replicas: 3, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	send := func(payload string, opts ...SendOption) (uint64, error) {
		// Far longer than a store on loopback takes: a send that takes it
		// is stuck.
		try, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return a.Send(try, payload, opts...)
	}
	first, err := send("a", UniqueKey("order-1"), MsgID("send-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send("b", UniqueKey("order-1"), MsgID("send-2")); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second send of the key: %v, want ErrDuplicate", err)
	}
	if again, err := send("a", UniqueKey("order-1"), MsgID("send-1")); err != nil || again != first {
		t.Errorf("first send repeated with its message ID: %d, %v; want %d, the first store's ID", again, err, first)
	}
	if _, err := send("c", UniqueKey("order-1"), MsgID("send-3")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("third send of the key: %v, want ErrDuplicate", err)
	}
	for _, key := range []string{"order-2", ""} {
		if _, err := send("d", UniqueKey(key)); err != nil {
			t.Errorf("send with key %q after a refusal: %v", key, err)
		}
	}
	info, err := a.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Msgs; n != 3 {
		t.Errorf("%d tasks stored, want 3", n)
	}
}

// TestClusterLeaderKillUniqueKeys sends tasks with unique keys to an actor
// with Replicas 3 on a three-node cluster, and shuts the server that
// leads the work stream down in the middle. Each key is sent by three
// sends with message IDs of their own, so that all but the first are
// refused for the key — the path where Send asks the server whether the
// refused send's own message ID was stored before (keyRefused) — each
// send that is stored is repeated with its message ID, and a send whose
// try fails is sent again with its message ID until it is stored or
// refused. No worker runs, so every key's task stays live: each
// key must be stored once, as the one send of it that succeeded, under
// the ID that send returned; and sends must keep completing, each within
// a bound, once a new leader is elected.
func TestClusterLeaderKillUniqueKeys(t *testing.T) {
	leakcheck.Check(t)
	cl, err := jsserver.StartCluster(3, jsserver.Options{Name: "leaderkey", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	urls := cl.ClientURLs()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	const name = "leaderkey"
	config := Config[int]{Replicas: 3, Lease: 2 * time.Second, FlushInterval: 100 * time.Millisecond, Logger: log}
	made, err := New(ctx, connect(t, urls), name, nil, config)
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, made)
	work, _, _ := made.Streams()
	leader := cl.StreamLeader(work)
	if leader == nil {
		t.Fatalf("no server leads stream %s", work)
	}
	// The sends go to the leader first, so that its shutdown drops their
	// connection, and tries in flight are sent again to another server.
	// (Shut down, a leader hands its streams on, and sends to another
	// server may see no election at all.)
	nc, err := nats.Connect(leader.ClientURL()+","+urls, nats.DontRandomize(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sender, err := New(ctx, nc, name, nil, config)
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, sender)

	const perKey = 3 // sends of each key, each with a message ID of its own
	type outcome struct {
		key, msgID string
		id         uint64 // the task ID, when stored
		dup        bool   // refused for the key
		started    time.Time
		took       time.Duration
	}
	var mu sync.Mutex
	var outcomes []outcome
	var resent atomic.Int64
	var next atomic.Int64
	stop := make(chan struct{})
	var senders sync.WaitGroup
	for range 8 {
		senders.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1))
				o := outcome{key: fmt.Sprintf("key-%d", i/perKey), msgID: fmt.Sprintf("send-%d", i), started: time.Now()}
				for {
					try, cancel := context.WithTimeout(ctx, 3*time.Second)
					t0 := time.Now()
					id, err := sender.Send(try, i, UniqueKey(o.key), MsgID(o.msgID))
					cancel()
					if err == nil || errors.Is(err, ErrDuplicate) {
						o.id, o.dup = id, err != nil
						break
					}
					if !errors.Is(err, context.DeadlineExceeded) {
						// Send tries again itself until its context
						// ends, unless the server answered.
						t.Errorf("send %d: %v", i, err)
					}
					if ctx.Err() != nil {
						t.Errorf("send %d: neither stored nor refused before the test's deadline: %v", i, err)
						return
					}
					resent.Add(1)
					t.Logf("send %d failed after %v, to be sent again: %v", i, time.Since(t0).Round(time.Millisecond), err)
				}
				if !o.dup {
					// The send repeated with its message ID, as after a
					// lost acknowledgement: the server checks the ID
					// before the key, and answers with the first store.
					for {
						try, cancel := context.WithTimeout(ctx, 3*time.Second)
						id, err := sender.Send(try, i, UniqueKey(o.key), MsgID(o.msgID))
						cancel()
						if err == nil && id == o.id {
							break
						}
						if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
							t.Errorf("send %d, stored as task %d, repeated with its message ID: %d, %v", i, o.id, id, err)
							break
						}
						resent.Add(1)
					}
				}
				o.took = time.Since(o.started)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		})
	}
	stopSenders := sync.OnceFunc(func() {
		close(stop)
		senders.Wait()
	})
	defer stopSenders()

	done := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(outcomes)
	}
	eventually(t, 30*time.Second, "300 sends stored or refused", func() bool { return done() >= 300 })
	if l := cl.StreamLeader(work); l != leader {
		t.Fatalf("the leader of stream %s changed before the shutdown", work)
	}
	leader.Shutdown()
	shutdown := time.Now()
	var successor *jsserver.Server
	eventually(t, 30*time.Second, "another server leads the work stream", func() bool {
		successor = cl.StreamLeader(work)
		return successor != nil && successor != leader
	})
	elected := time.Now()
	t.Logf("%s, which led %s, shut down; %s leads it %v later", leader.Name(), work, successor.Name(), elected.Sub(shutdown).Round(time.Millisecond))
	before := done()
	eventually(t, 30*time.Second, "600 sends stored or refused after the new leader's election", func() bool { return done() >= before+600 })
	stopSenders()

	// Every key's task, by subject: no worker took any.
	info, err := sender.stream.Info(ctx, jetstream.WithSubjectFilter(sender.l.places(placeReady)))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	type keyed struct {
		stored []outcome // sends that returned a task ID
		sends  int
	}
	keys := map[string]*keyed{}
	// A send started after the election must end within this bound: a
	// try waits 2s for its acknowledgement, a probe 2s more.
	const bound = 10 * time.Second
	var slowest time.Duration
	dups := 0
	for _, o := range outcomes {
		k := keys[o.key]
		if k == nil {
			k = &keyed{}
			keys[o.key] = k
		}
		k.sends++
		if o.dup {
			dups++
		} else {
			k.stored = append(k.stored, o)
		}
		if o.started.After(elected) {
			slowest = max(slowest, o.took)
			if o.took > bound {
				t.Errorf("send %s of key %s, begun %v after the election, took %v", o.msgID, o.key, o.started.Sub(elected).Round(time.Millisecond), o.took.Round(time.Millisecond))
			}
		}
	}
	for key, k := range keys {
		subject := sender.l.subject(placeReady, keyToken(key))
		if n := info.State.Subjects[subject]; n != 1 {
			t.Errorf("key %s: %d tasks stored, want 1 (sends: %d, of them returned an ID: %d)", key, n, k.sends, len(k.stored))
			continue
		}
		if len(k.stored) != 1 {
			t.Errorf("key %s: stored once, but %d of its %d sends returned a task ID: %+v", key, len(k.stored), k.sends, k.stored)
			continue
		}
		m, err := sender.stream.GetLastMsgForSubject(ctx, subject)
		if err != nil {
			t.Fatalf("key %s: %v", key, err)
		}
		if o := k.stored[0]; m.Sequence != o.id || m.Header.Get(nats.MsgIdHdr) != o.msgID {
			t.Errorf("key %s: stored as task %d by %q, but send %q returned task %d", key, m.Sequence, m.Header.Get(nats.MsgIdHdr), o.msgID, o.id)
		}
	}
	t.Logf("%d sends of %d keys: %d refused for the key, %d tries sent again; slowest send begun after the election: %v",
		len(outcomes), len(keys), dups, resent.Load(), slowest.Round(time.Millisecond))
}

// TestClusterReplicasAddedLater runs an actor on streams made with one
// replica that an operator then replicates on a three-node cluster. A
// redelivered task whose retry was stored but whose original's
// acknowledgement was lost must not be probed for on the streams as New
// found them: a probe sent to a replicated stream stops it, and every
// send after it times out.
func TestClusterReplicasAddedLater(t *testing.T) {
	leakcheck.Check(t)
	cl, err := jsserver.StartCluster(3, jsserver.Options{Name: "addreplicas", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	var seen runs
	a, err := New(ctx, connect(t, cl.ClientURLs()), "addreplicas", func(ctx context.Context, task actor.Task[string]) error {
		if seen.add(task); seen.count() == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}, Config[string]{Workers: 2, MaxAttempts: 5, Backoff: fastBackoff, Lease: minLease, FlushInterval: time.Hour,
		OnError: func(*actor.TaskError) {}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	for _, name := range []string{a.l.workStream(), a.l.deadStream()} {
		st, err := a.js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		cfg.Replicas = 3
		if _, err := a.js.UpdateStream(ctx, cfg); err != nil {
			t.Fatalf("replicating %s: %v", name, err)
		}
	}
	if single, err := a.singleServer(ctx, a.l.workStream(), a.l.deadStream()); err != nil || single {
		t.Fatalf("singleServer after the streams were replicated: %v, %v; want false", single, err)
	}
	loseFirstAck(a)
	if _, err := a.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	// The retry runs, and so, on a replicated stream, does the original
	// delivered again (see superseded).
	eventually(t, 30*time.Second, "the original to run again once its lease ran out", func() bool { return seen.count() >= 3 })
	try, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	if _, err := a.Send(try, "y"); err != nil {
		t.Fatalf("send after the redelivery: %v (the stream stopped?)", err)
	}
}
