package pgpool

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// faults is the fault suite of internal/testenv, run on pgpool: its calls
// are SELECT 1 (Ping) and pg_sleep, its sessions are named by
// application_name and ended with pg_terminate_backend.
var faults = testenv.FaultSuite[*Pool, *Conn]{
	Timeout: 2 * time.Second,
	Shared:  testenv.Postgres,
	Private: func(t testing.TB) (testenv.OutageServer, string) {
		srv := testenv.PrivatePostgres(t)
		return srv, srv.DSN()
	},
	HostPort: testenv.PostgresHostPort,
	Move: func(t testing.TB, dsn, hostport string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.Host = hostport
		return u.String()
	},
	Open: func(t testing.TB, dsn, name string, tune func(*actorpool.Config), dial testenv.DialFunc) *Pool {
		return newPGPool(t, dsn, name, func(c *Config) {
			tuneAs(c, tune)
			if dial != nil {
				c.ConnConfig.DialFunc = pgconn.DialFunc(dial)
			}
		})
	},
	Admin: func(t testing.TB, dsn string) testenv.FaultAdmin { return pgAdmin{t, admin(t, dsn)} },
	Call:  (*Pool).Ping,
	Ping:  (*Conn).Ping,
	ConnectFailed: func(err error) bool {
		var ce *pgconn.ConnectError
		return errors.As(err, &ce)
	},
	Block: func(p *Pool, ctx context.Context) error {
		// The server ends each sleep by itself soon after.
		_, err := p.Exec(ctx, "SELECT pg_sleep(2)")
		return err
	},
}

// tuneAs sets c as tune sets an actorpool.Config: the settings pgxpool has
// fields for through those fields, the rest in c.Pool.
func tuneAs(c *Config, tune func(*actorpool.Config)) {
	a := c.Pool
	tune(&a)
	if a.MaxObjects != 0 {
		c.MaxConns = int32(a.MaxObjects)
	}
	c.MinIdleConns = int32(a.MinIdle)
	if a.ValidationInterval != 0 {
		c.HealthCheckPeriod = a.ValidationInterval
	}
	a.MaxObjects, a.MinIdle, a.ValidationInterval = 0, 0, 0
	c.Pool = a
}

// holdAll has n callers take a connection each and hold it until all n are
// out, so that every idle connection is taken, and looked at, whatever
// order the takes come in; each then runs use on its connection. No take
// and no use may fail.
func holdAll(t *testing.T, ctx context.Context, p *Pool, n int, use func(*Conn) error) {
	t.Helper()
	var held, wg sync.WaitGroup
	held.Add(n)
	for range n {
		wg.Go(func() {
			c, err := p.Acquire(ctx)
			held.Done()
			if err != nil {
				t.Errorf("Acquire: %v", err)
				return
			}
			defer c.Release()
			held.Wait()
			if err := use(c); err != nil {
				t.Errorf("a call on a connection the pool handed out: %v", err)
			}
		})
	}
	wg.Wait()
}

// pgAdmin looks at and ends sessions by their application_name.
type pgAdmin struct {
	t   testing.TB
	adm *pgx.Conn
}

func (a pgAdmin) Sessions(name string) []string {
	var ids []string
	for _, pid := range backends(a.t, a.adm, name) {
		ids = append(ids, strconv.FormatUint(uint64(pid), 10))
	}
	return ids
}

func (a pgAdmin) Kill(name string) {
	if _, err := a.adm.Exec(context.Background(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", name); err != nil {
		a.t.Fatal(err)
	}
}

// TestFault runs the fault suite: a private server stopped under load, or
// for 2s while the pool's connects are counted; sessions ended idle and in
// use; a server down when the pool starts; statements past their deadline.
func TestFault(t *testing.T) { faults.Run(t) }

// TestFaultTerminateIdle ends three of the pool's five idle sessions
// with pg_terminate_backend, long before the pool would ping them: once
// the pool's clock has ticked, it finds them by looking at their sockets
// before handing them out, and none of the five callers that follow gets
// an error. Over TLS too, where the pool cannot read what waits. The
// callers hold their connections until all five are out, so every idle
// connection is taken, and looked at, whatever order the takes come in:
// exactly the three dead ones are destroyed as invalid.
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
			p := newPGPoolStill(t, u.String(), name, func(c *Config) { c.MaxConns, c.MinIdleConns = n, n })
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

			p.clock.Tick()
			holdAll(t, ctx, p, n, func(c *Conn) error { return c.Ping(ctx) })
			// Destroys are counted when they end, on goroutines of the pool.
			testenv.Eventually(t, 10*time.Second, "the ended sessions' connections to be destroyed", func() bool {
				return p.Stats().DestroyedBy.Invalid >= killed
			})
			if st := p.Stats(); st.DestroyedBy.Invalid != killed {
				t.Errorf("destroyed as invalid: %d, want %d", st.DestroyedBy.Invalid, killed)
			}
			faults.CheckNoSlotLost(t, p)
		})
	}
}

// TestFaultRestartIdle restarts the server under a pool of idle
// connections: once the pool's clock has ticked, the pool finds every
// dead one before handing it out, and no caller gets an error; the
// callers hold their connections until all are out, as in
// TestFaultTerminateIdle, so that every dead one is taken.
func TestFaultRestartIdle(t *testing.T) {
	srv := testenv.PrivatePostgres(t)
	testenv.CheckGoroutines(t)
	const n = 4
	p := newPGPoolStill(t, srv.DSN(), testName(), func(c *Config) { c.MaxConns, c.MinIdleConns = n, n })
	testenv.Eventually(t, 20*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle == n })
	srv.Stop()
	srv.Start()

	p.clock.Tick()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holdAll(t, ctx, p, n, func(c *Conn) error {
		var one int
		return c.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
	testenv.Eventually(t, 10*time.Second, "the dead connections to be destroyed", func() bool {
		return p.Stats().DestroyedBy.Invalid >= n
	})
	if st := p.Stats(); st.DestroyedBy.Invalid != n {
		t.Errorf("destroyed as invalid: %d, want %d", st.DestroyedBy.Invalid, n)
	}
	faults.CheckNoSlotLost(t, p)
}
