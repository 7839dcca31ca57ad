package pgpool

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5/pgconn"
)

// A fault test that stops the server stops a private cluster of its own;
// the shared server that ACTORPOOL_POSTGRES names is never stopped.

// checkNoSlotLost checks that every slot of p can still hold a working
// connection.
func checkNoSlotLost(t *testing.T, p *Pool) {
	t.Helper()
	testenv.CheckNoSlotLost(t, p.Stats, func(ctx context.Context) (func(), error) {
		c, err := p.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.Ping(ctx); err != nil {
			c.Release()
			return nil, err
		}
		return c.Release, nil
	})
}

// TestFaultRestart stops PostgreSQL in the middle of a load of concurrent
// callers and starts it again: callers fail, within their deadlines, while
// it is down, and all succeed again once it is back.
func TestFaultRestart(t *testing.T) {
	srv := testenv.PrivatePostgres(t)
	dsn := srv.DSN()
	testenv.CheckGoroutines(t)
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.Pool.MaxObjects, c.Pool.CreateTimeout = 8, 2*time.Second
	})
	load := testenv.StartLoad(t, 32, 2*time.Second, func(ctx context.Context) error {
		var one int
		return p.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
	load.WaitAllSucceed(t, 30*time.Second)

	srv.Stop()
	load.WaitErrors(t, 20*time.Second)
	srv.Start()
	load.WaitAllSucceed(t, 60*time.Second)
	load.Stop()
	load.Check(t)
	checkNoSlotLost(t, p)
}

// TestFaultOutageRecovery stops PostgreSQL for 2s under 64 clients with 1s
// deadlines on a pool of 16, and starts it again: the pool must try about
// ten connections a second meanwhile, not hammer the server, and serve the
// calls that were waiting when it came back. docs/benchmarks.md reports
// its figures, with the peers'.
func TestFaultOutageRecovery(t *testing.T) {
	srv := testenv.PrivatePostgres(t)
	testenv.CheckGoroutines(t)
	o := testenv.Outage{Clients: 64, Size: 16, Deadline: time.Second, Down: 2 * time.Second}
	r := testenv.MeasureOutage(t, srv, o, func(dial testenv.DialFunc) (func(context.Context) error, func()) {
		p := newPGPool(t, srv.DSN(), testName(), func(c *Config) {
			c.Pool.MaxObjects, c.Pool.Logger = o.Size, slog.New(slog.DiscardHandler)
			c.ConnConfig.DialFunc = pgconn.DialFunc(dial)
		})
		return func(ctx context.Context) error {
			var one int
			return p.QueryRow(ctx, "SELECT 1").Scan(&one)
		}, nil
	})
	t.Log(r)
	r.Check(t)
}

// TestFaultTerminateBackend ends the pool's idle sessions from the server
// side with pg_terminate_backend: the pings of Test find them and the pool
// replaces them before a caller takes them.
func TestFaultTerminateBackend(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	name := testName()
	const n = 4
	p := newPGPool(t, dsn, name, func(c *Config) {
		c.Pool.MaxObjects, c.Pool.MinIdle, c.Pool.ValidationInterval = n, n, 20*time.Millisecond
	})
	adm := admin(t, dsn)
	ctx := context.Background()
	testenv.Eventually(t, 20*time.Second, "MinIdle sessions", func() bool { return len(backends(t, adm, name)) == n })
	old := backends(t, adm, name)
	if _, err := adm.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", name); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the ended sessions to fail their test and be replaced", func() bool {
		return p.Stats().DestroyedBy.TestFailed >= n && len(backends(t, adm, name)) == n
	})
	if now := backends(t, adm, name); slices.ContainsFunc(now, func(pid uint32) bool { return slices.Contains(old, pid) }) {
		t.Errorf("terminated backends %v still listed: %v", old, now)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if _, err := p.Exec(ctx, "SELECT pg_sleep(0.01)"); err != nil {
				t.Errorf("query on a connection handed out after the terminations: %v", err)
			}
		})
	}
	wg.Wait()
	checkNoSlotLost(t, p)
}

// TestFaultTerminateIdle ends three of the pool's five idle sessions
// with pg_terminate_backend, long before the pool would ping them: once
// the pool's clock has ticked, it finds them by looking at their sockets
// before handing them out, and none of the five callers that follow gets
// an error. Over TLS too, where the pool cannot read what waits.
func TestFaultTerminateIdle(t *testing.T) {
	dsn := testenv.Postgres(t)
	for _, sslmode := range []string{"disable", "require"} {
		t.Run("sslmode="+sslmode, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("sslmode", sslmode)
			u.RawQuery = q.Encode()
			name := testName()
			const n, killed = 5, 3
			p := newPGPoolStill(t, u.String(), name, func(c *Config) { c.Pool.MaxObjects, c.Pool.MinIdle = n, n })
			adm := admin(t, dsn)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			testenv.Eventually(t, 20*time.Second, "MinIdle sessions", func() bool { return len(backends(t, adm, name)) == n })
			var tls int
			if err := adm.QueryRow(ctx, "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE application_name = $1 AND ssl", name).Scan(&tls); err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{"disable": 0, "require": n}[sslmode]; tls != want {
				t.Fatalf("sessions over TLS: %d, want %d", tls, want)
			}
			pids := backends(t, adm, name)[:killed]
			if _, err := adm.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid = ANY($2)", name, pids); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 20*time.Second, "the sessions to end", func() bool { return len(backends(t, adm, name)) == n-killed })

			p.clock.tick()
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					if err := p.Ping(ctx); err != nil {
						t.Errorf("Ping after %d of %d idle sessions were ended: %v", killed, n, err)
					}
				})
			}
			wg.Wait()
			if st := p.Stats(); st.DestroyedBy.Invalid != killed {
				t.Errorf("destroyed as invalid: %d, want %d", st.DestroyedBy.Invalid, killed)
			}
			checkNoSlotLost(t, p)
		})
	}
}

// TestFaultRestartIdle restarts the server under a pool of idle
// connections: once the pool's clock has ticked, the pool finds every
// dead one before handing it out, and no caller gets an error.
func TestFaultRestartIdle(t *testing.T) {
	srv := testenv.PrivatePostgres(t)
	testenv.CheckGoroutines(t)
	const n = 4
	p := newPGPoolStill(t, srv.DSN(), testName(), func(c *Config) { c.Pool.MaxObjects, c.Pool.MinIdle = n, n })
	testenv.Eventually(t, 20*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle == n })
	srv.Stop()
	srv.Start()

	p.clock.tick()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 * n {
		wg.Go(func() {
			var one int
			if err := p.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
				t.Errorf("query after a restart: %v", err)
			}
		})
	}
	wg.Wait()
	if st := p.Stats(); st.DestroyedBy.Invalid != n {
		t.Errorf("destroyed as invalid: %d, want %d", st.DestroyedBy.Invalid, n)
	}
	checkNoSlotLost(t, p)
}

// TestFaultTerminateInUse ends a session the pool has not tested: the
// caller who uses it gets the error, and the pool destroys it rather than
// handing it out again.
func TestFaultTerminateInUse(t *testing.T) {
	dsn := testenv.Postgres(t)
	name := testName()
	p := newPGPool(t, dsn, name, func(c *Config) { c.Pool.MaxObjects = 1 })
	adm := admin(t, dsn)
	ctx := context.Background()
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", name); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the session to end", func() bool { return len(backends(t, adm, name)) == 0 })
	if _, err := p.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a query on a terminated session succeeded")
	}
	testenv.Eventually(t, 10*time.Second, "the dead connection to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid == 1
	})
	if _, err := p.Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("query after the dead connection was replaced: %v", err)
	}
	checkNoSlotLost(t, p)
}

// TestFaultDownAtStart starts a pool whose server is down, with callers
// waiting: they fail within their deadlines, and the pool recovers once
// the server is up. The server is a proxy to PostgreSQL on an address
// nothing listens on, so the shared server keeps running.
func TestFaultDownAtStart(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	addr := testenv.FreeAddr(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := testenv.PostgresHostPort(t, dsn)
	u.Host = addr
	p := newPGPool(t, u.String(), testName(), func(c *Config) {
		c.Pool.MaxObjects, c.Pool.MinIdle, c.Pool.CreateTimeout = 4, 2, 2*time.Second
	})
	load := testenv.StartLoad(t, 8, 300*time.Millisecond, func(ctx context.Context) error {
		return p.Ping(ctx)
	})
	load.WaitErrors(t, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err = p.Ping(ctx)
	cancel()
	if !errors.Is(err, actorpool.ErrCreateFailed) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ping while the server is down: %v, want a create error or a timeout", err)
	}

	testenv.StartProxy(t, addr, target)
	load.WaitAllSucceed(t, 30*time.Second)
	load.Stop()
	load.Check(t)
	testenv.Eventually(t, 10*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle >= 2 })
	checkNoSlotLost(t, p)
}

// TestFaultSlowQuery runs slow queries (pg_sleep) from more callers than
// the pool has connections, with contexts that end first: every caller
// gets an error within its deadline, the interrupted connections are
// destroyed and replaced, and no slot is lost.
func TestFaultSlowQuery(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	const n = 4
	p := newPGPool(t, dsn, testName(), func(c *Config) { c.Pool.MaxObjects, c.Pool.MinIdle = n, n })
	// Connected first, so that on a busy machine no caller spends its
	// deadline waiting for a connect: each connection runs a query.
	testenv.Eventually(t, 20*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle == n })
	const callers = 3 * n
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			// The server ends each sleep by itself soon after.
			_, err := p.Exec(ctx, "SELECT pg_sleep(2)")
			if late := time.Since(start) - 200*time.Millisecond; late > testenv.Grace {
				t.Errorf("query returned %v after its deadline", late)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	interrupted := int64(0)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("slow query past its deadline: %v, want context.DeadlineExceeded", err)
		}
		var werr *actorpool.WaitError
		if !errors.As(err, &werr) {
			interrupted++
		}
	}
	if interrupted < n {
		t.Errorf("%d queries interrupted, want at least %d: every connection ran one", interrupted, n)
	}
	testenv.Eventually(t, 10*time.Second, "the interrupted connections to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid == interrupted
	})
	checkNoSlotLost(t, p)
}
