package pgpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// requirePasswords makes a private cluster check passwords on TCP
// connections from every role but postgres, which the test's admin
// connection uses, and waits until it does.
func requirePasswords(t *testing.T, adm *pgx.Conn, srv *testenv.PGServer) {
	t.Helper()
	ctx := context.Background()
	var hba string
	if err := adm.QueryRow(ctx, "SHOW hba_file").Scan(&hba); err != nil {
		t.Fatal(err)
	}
	// The server writes the file, as the user that owns it.
	_, err := adm.Exec(ctx, `COPY (VALUES ('local all all trust'), ('host all postgres 127.0.0.1/32 trust'),
		('host all all 127.0.0.1/32 scram-sha-256')) TO `+quote(hba))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	probe := "probe_" + testName()
	if _, err := adm.Exec(ctx, "CREATE ROLE "+probe+" LOGIN PASSWORD 'right'"); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(probe, "wrong")
	testenv.Eventually(t, 10*time.Second, "the server to check passwords", func() bool {
		c, err := pgx.Connect(ctx, u.String())
		if err == nil {
			c.Close(ctx)
		}
		var pgErr *pgconn.PgError
		return errors.As(err, &pgErr) && pgErr.Code == "28P01" // invalid_password
	})
}

func quote(s string) string { return "'" + s + "'" }

// TestPostgresRotatePassword rotates a role's password on a server that
// checks it, while the pool connects: Config.BeforeConnect gives each
// connect the current password on a copy of the pool's ConnConfig, and
// what the caller changes in its own Config, or in what Pool.Config
// returns, reaches no connect. The race detector checks that nothing the
// connects read is written meanwhile.
func TestPostgresRotatePassword(t *testing.T) {
	srv := testenv.PrivatePostgres(t)
	testenv.CheckGoroutines(t)
	adm := admin(t, srv.DSN())
	requirePasswords(t, adm, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	role := testName()
	if _, err := adm.Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	var password atomic.Pointer[string]
	rotate := func(pw string) {
		t.Helper()
		if _, err := adm.Exec(ctx, "ALTER ROLE "+role+" PASSWORD "+quote(pw)); err != nil {
			t.Fatal(err)
		}
		password.Store(&pw)
	}
	rotate("first")

	u, err := url.Parse(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	cfg, err := ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	var connects atomic.Int64
	cfg.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
		connects.Add(1)
		cc.Password = *password.Load()
		return nil
	}
	cfg.MaxConns = 4
	cfg.Pool.Logger = testLogger(t)
	p, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()

	// A careless caller keeps writing to its Config and to what
	// Pool.Config returns while connects run.
	stop := make(chan struct{})
	var scribbler sync.WaitGroup
	scribbler.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			c := p.Config()
			c.ConnConfig.Password, c.ConnConfig.User = "wrong", "nobody"
			c.ConnConfig.RuntimeParams["application_name"] = "scribbled"
			c.MaxConns = 1
			cfg.ConnConfig.Password, cfg.ConnConfig.User = "wrong", "nobody"
			runtime.Gosched()
		}
	})

	const rounds, callers = 5, 8
	for round := range rounds {
		// A connect still in flight from the last round holds the last
		// password, which the server is about to stop accepting: a real
		// rotation keeps the old password valid until then, and so does
		// this test, by letting such connects finish first.
		testenv.Eventually(t, 30*time.Second, "the last round's connects to finish", func() bool { return p.Stats().Creating == 0 })
		rotate(fmt.Sprintf("password-%d", round))
		p.Reset()
		// More callers than connections: the pool connects four at once,
		// each with this round's password.
		before := connects.Load()
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				var user string
				if err := p.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != role {
					t.Errorf("round %d: current_user = %q, %v; want %s", round, user, err, role)
				}
			})
		}
		wg.Wait()
		if connects.Load() == before {
			t.Errorf("round %d: no connect after Reload", round)
		}
	}
	close(stop)
	scribbler.Wait()

	c := p.Config()
	if c.ConnConfig.User != role || c.ConnConfig.Password != "" || c.MaxConns != 4 || c.ConnConfig.RuntimeParams["application_name"] == "scribbled" {
		t.Errorf("Config after the caller changed copies: user %q, password %q, MaxConns %d, application_name %q; want %s, empty, 4 and unset",
			c.ConnConfig.User, c.ConnConfig.Password, c.MaxConns, c.ConnConfig.RuntimeParams["application_name"], role)
	}
	if st := p.Stats(); st.CreateErrors != 0 {
		t.Errorf("create errors: %d, want 0", st.CreateErrors)
	}
}

// TestPostgresBeforeConnectError checks that an error from BeforeConnect
// fails the create, wrapped.
func TestPostgresBeforeConnectError(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	refuse := errors.New("no secret to hand")
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.BeforeConnect = func(context.Context, *pgx.ConnConfig) error { return refuse }
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Ping(ctx); !errors.Is(err, refuse) {
		t.Errorf("Ping: %v, want BeforeConnect's error", err)
	}
}

// TestPostgresConnectTimeoutPerHost checks that connect_timeout bounds
// each host of a multi-host connection string, as pgx applies it, not the
// whole connect: a first host that never answers must leave the next one
// its own connect_timeout, so that a pool fails over as pgxpool's does.
func TestPostgresConnectTimeoutPerHost(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)

	// A host that takes connections and never says a word.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	held.Go(func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	})
	t.Cleanup(func() { silent.Close(); held.Wait() })

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = silent.Addr().String() + "," + u.Host
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()

	p := newPGPool(t, u.String(), testName(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire with the first host silent: %v, want a connection to the second", err)
	}
	c.Release()
}
