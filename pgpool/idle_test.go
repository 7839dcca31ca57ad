package pgpool

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/sockpeek"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestPostgresIdleCheck checks, on a pool of one, that a connection taken
// again within a tick of the pool's clock is not looked at — its dead
// session reaches the caller, the price of no system call on most takes —
// and that one idle across a tick is: its dead session is found and
// replaced before the caller gets it.
func TestPostgresIdleCheck(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	name := testName()
	p := newPGPoolStill(t, dsn, name, func(c *Config) { c.MaxConns = 1 })
	adm := admin(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	terminate := func() {
		t.Helper()
		if err := p.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := adm.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", name); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "the session to end", func() bool { return len(backends(t, adm, name)) == 0 })
	}

	terminate()
	if err := p.Ping(ctx); err == nil {
		t.Fatal("Ping on a session ended within the tick succeeded: the pool looked at a connection it had just seen")
	}
	terminate()
	p.clock.Tick()
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("Ping after the clock ticked: %v, want the dead session found and replaced", err)
	}
	if st := p.Stats(); st.DestroyedBy.Invalid != 2 || st.Created != 3 {
		t.Errorf("destroyed as invalid %d, created %d; want 2 and 3", st.DestroyedBy.Invalid, st.Created)
	}
}

// TestPostgresIdleCheckKeepsNotification checks that a notification
// waiting on an idle connection that LISTENs does not retire it: the look
// across a tick keeps it, and pgx reads the notification on the next use.
func TestPostgresIdleCheckKeepsNotification(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	channel := testName()
	p := newPGPoolStill(t, dsn, testName(), func(c *Config) { c.MaxConns = 1 })
	adm := admin(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "LISTEN "+channel); err != nil {
		t.Fatal(err)
	}
	first := c.Conn().PgConn().PID()
	socket := c.Conn().PgConn().Conn()
	c.Release()
	if _, err := adm.Exec(ctx, "SELECT pg_notify($1, 'hello')", channel); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the notification to reach the idle connection", func() bool {
		_, waiting, _ := sockpeek.Peek(socket)
		return waiting
	})

	p.clock.Tick()
	c, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if pid := c.Conn().PgConn().PID(); pid != first {
		t.Errorf("backend %d after the notification, want %d: the connection was kept", pid, first)
	}
	n, err := c.Conn().WaitForNotification(ctx)
	if err != nil || n.Channel != channel || n.Payload != "hello" {
		t.Errorf("notification: %+v, %v; want hello on %s", n, err, channel)
	}
}

// BenchmarkPostgresTakeGiveBack takes an idle connection and gives it
// back, with no statement between: the hot path with Validate, which the
// idle check is part of, run twice per cycle, on one goroutine and on all.
func BenchmarkPostgresTakeGiveBack(b *testing.B) {
	dsn := testenv.Postgres(b)
	cfg, err := ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns, cfg.MinIdleConns = 4, 4
	p, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	testenv.Eventually(b, 20*time.Second, "MinIdle connections", func() bool { return p.Stats().Idle == 4 })
	b.Run("goroutines=1", func(b *testing.B) {
		for b.Loop() {
			l, err := p.pool.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			l.Release()
		}
	})
	b.Run("goroutines=GOMAXPROCS", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l, err := p.pool.Acquire(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				l.Release()
			}
		})
	})
}
