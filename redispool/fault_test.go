package redispool

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/gomodule/redigo/redis"
)

// A fault test that stops the server stops a private redis-server of its
// own; the shared server that ACTORPOOL_REDIS names is never stopped.

// checkNoSlotLost checks that every slot of p can still hold a working
// connection.
func checkNoSlotLost(t *testing.T, p *Pool) {
	t.Helper()
	testenv.CheckNoSlotLost(t, p.Stats, func(ctx context.Context) (func(), error) {
		c, err := p.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := c.DoContext(ctx, "PING"); err != nil {
			c.Close()
			return nil, err
		}
		return func() { c.Close() }, nil
	})
}

// TestFaultRestart stops Redis in the middle of a load of concurrent
// callers and starts it again: callers fail, within their deadlines, while
// it is down, and all succeed again once it is back.
func TestFaultRestart(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	addr := srv.Addr()
	testenv.CheckGoroutines(t)
	name := testName(t)
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 8, CreateTimeout: time.Second})
	load := testenv.StartLoad(t, 32, time.Second, func(ctx context.Context) error {
		_, err := p.Do(ctx, "INCR", name)
		return err
	})
	load.WaitAllSucceed(t, 20*time.Second)

	srv.Stop()
	load.WaitErrors(t, 20*time.Second)
	srv.Start()
	load.WaitAllSucceed(t, 30*time.Second)
	load.Stop()
	load.Check(t)
	checkNoSlotLost(t, p)
	p.Do(context.Background(), "DEL", name)
}

// TestFaultOutageRecovery stops Redis for 2s under 64 clients with 1s
// deadlines on a pool of 16, and starts it again: the pool must try about
// ten connections a second meanwhile, not hammer the server, and serve the
// calls that were waiting when it came back. docs/benchmarks.md reports
// its figures, with the peers'.
func TestFaultOutageRecovery(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	testenv.CheckGoroutines(t)
	name := testName(t)
	o := testenv.Outage{Clients: 64, Size: 16, Deadline: time.Second, Down: 2 * time.Second}
	r := testenv.MeasureOutage(t, srv, o, func(dial testenv.DialFunc) (func(context.Context) error, func()) {
		p, err := New(Config{
			Addr:        srv.Addr(),
			Dial:        dial,
			DialOptions: []redis.DialOption{redis.DialClientName(name)},
			Pool:        actorpool.Config{MaxObjects: o.Size, Logger: slog.New(slog.DiscardHandler)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context) error {
			_, err := p.Do(ctx, "INCR", name)
			return err
		}, func() { p.Close(context.Background()) }
	})
	t.Log(r)
	r.Check(t)
}

// TestFaultClientKill kills the pool's connections from the server side:
// the PINGs of Test find them and the pool replaces them before a caller
// takes them.
func TestFaultClientKill(t *testing.T) {
	addr := testenv.Redis(t)
	testenv.CheckGoroutines(t)
	name := testName(t)
	const n = 4
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: n, MinIdle: n, ValidationInterval: 20 * time.Millisecond})
	adm := admin(t, addr)
	testenv.Eventually(t, 10*time.Second, "MinIdle connections", func() bool { return len(clientIDs(t, adm, name)) == n })
	old := clientIDs(t, adm, name)
	for _, id := range old {
		if _, err := adm.Do("CLIENT", "KILL", "ID", id); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 20*time.Second, "the killed connections to fail their test and be replaced", func() bool {
		return p.Stats().DestroyedBy.TestFailed >= n && len(clientIDs(t, adm, name)) == n
	})
	if now := clientIDs(t, adm, name); slices.ContainsFunc(now, func(id string) bool { return slices.Contains(old, id) }) {
		t.Errorf("killed clients %v still listed: %v", old, now)
	}
	// Every connection works, with no error for any caller.
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			time.Sleep(10 * time.Millisecond) // hold it, so that n are out at once
			if _, err := c.DoContext(ctx, "PING"); err != nil {
				t.Errorf("PING on a connection the pool handed out after the kill: %v", err)
			}
		})
	}
	wg.Wait()
	checkNoSlotLost(t, p)
}

// TestFaultClientKillInUse kills a connection that the pool has not tested:
// the caller who uses it gets the error, and the pool destroys it rather
// than handing it out again.
func TestFaultClientKillInUse(t *testing.T) {
	addr := testenv.Redis(t)
	name := testName(t)
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: 1})
	ctx := context.Background()
	if _, err := p.Do(ctx, "PING"); err != nil {
		t.Fatal(err)
	}
	adm := admin(t, addr)
	for _, id := range clientIDs(t, adm, name) {
		adm.Do("CLIENT", "KILL", "ID", id)
	}
	if _, err := p.Do(ctx, "PING"); err == nil {
		t.Fatal("PING on a killed connection succeeded")
	}
	testenv.Eventually(t, 10*time.Second, "the killed connection to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid == 1
	})
	if _, err := p.Do(ctx, "PING"); err != nil {
		t.Errorf("PING after the killed connection was replaced: %v", err)
	}
	checkNoSlotLost(t, p)
}

// TestFaultDownAtStart starts a pool whose server is down, with callers
// waiting: they fail within their deadlines, with the connect error, and
// the pool recovers once the server is up. The server is a proxy to Redis
// on an address nothing listens on, so the shared server keeps running.
func TestFaultDownAtStart(t *testing.T) {
	redisAddr := testenv.Redis(t)
	testenv.CheckGoroutines(t)
	addr := testenv.FreeAddr(t)
	p, err := New(Config{Addr: addr, Pool: actorpool.Config{MaxObjects: 4, MinIdle: 2, CreateTimeout: time.Second, Logger: testLogger(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	load := testenv.StartLoad(t, 8, 200*time.Millisecond, func(ctx context.Context) error {
		_, err := p.Do(ctx, "PING")
		return err
	})
	load.WaitErrors(t, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = p.Do(ctx, "PING")
	cancel()
	if !errors.Is(err, actorpool.ErrCreateFailed) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Do while the server is down: %v, want a create error or a timeout", err)
	}
	if st := p.Stats(); st.CreateErrors == 0 {
		t.Errorf("no create errors while the server is down: %+v", st)
	}

	testenv.StartProxy(t, addr, redisAddr)
	load.WaitAllSucceed(t, 30*time.Second)
	load.Stop()
	load.Check(t)
	testenv.Eventually(t, 10*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle >= 2 })
	checkNoSlotLost(t, p)
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestFaultSlowCommand runs commands that block on the server (BLPOP on an
// empty list) from more callers than the pool has connections, with
// contexts that end first: every caller gets an error within its deadline,
// the blocked connections are closed and replaced, and no slot is lost.
func TestFaultSlowCommand(t *testing.T) {
	addr := testenv.Redis(t)
	testenv.CheckGoroutines(t)
	name := testName(t)
	const n = 4
	p := newRedisPool(t, addr, name, actorpool.Config{MaxObjects: n})
	const callers = 3 * n
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := p.Do(ctx, "BLPOP", name, 30)
			if late := time.Since(start) - 100*time.Millisecond; late > testenv.Grace {
				t.Errorf("BLPOP returned %v after its deadline", late)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	// Callers that got a connection had it interrupted; the others timed
	// out waiting for one.
	interrupted := int64(0)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("BLPOP past the deadline: %v, want context.DeadlineExceeded", err)
		}
		var werr *actorpool.WaitError
		if !errors.As(err, &werr) {
			interrupted++
		}
	}
	if interrupted < n {
		t.Errorf("%d commands interrupted, want at least %d: every connection ran one", interrupted, n)
	}
	testenv.Eventually(t, 10*time.Second, "the interrupted connections to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid == interrupted
	})
	// The server no longer holds any client of ours blocked in BLPOP.
	adm := admin(t, addr)
	testenv.Eventually(t, 10*time.Second, "the server to drop the interrupted clients", func() bool {
		return len(clientIDs(t, adm, name, "cmd=blpop")) == 0
	})
	checkNoSlotLost(t, p)
	if v, err := redis.Values(p.Do(context.Background(), "BLPOP", name, "0.01")); err != redis.ErrNil || v != nil {
		t.Errorf("BLPOP after = %v, %v; want a nil reply", v, err)
	}
}
