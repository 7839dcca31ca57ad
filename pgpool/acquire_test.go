package pgpool

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// TestWithRunsHooks checks that With takes its connection through the
// pool's hooks, once: PrepareConn and the acquire tracer when it takes it,
// AfterRelease and the release tracer when it gives it back, and none of
// them for the statements nested in it, which run on its connection.
func TestWithRunsHooks(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	var prepares, afterReleases atomic.Int32
	tracer := &countingTracer{}
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns = 1
		c.PrepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) {
			prepares.Add(1)
			_, err := conn.Exec(ctx, "SET application_name = 'prepared'")
			return err == nil, err
		}
		c.AfterRelease = func(conn *pgx.Conn) bool {
			afterReleases.Add(1)
			return true
		}
		c.ConnConfig.Tracer = tracer
	})
	ctx := context.Background()
	err := p.With(ctx, func(ctx context.Context, c *Conn) error {
		var name string
		if err := p.QueryRow(ctx, "SHOW application_name").Scan(&name); err != nil || name != "prepared" {
			t.Errorf("application_name inside With = %q, %v; want the one PrepareConn set", name, err)
		}
		inner, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		if inner.Conn() != c.Conn() {
			t.Error("Acquire inside With took another connection")
		}
		inner.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "AfterRelease", func() bool { return afterReleases.Load() == 1 })
	if n := prepares.Load(); n != 1 {
		t.Errorf("PrepareConn ran %d times, want once, for the With", n)
	}
	if s, e, r := tracer.starts.Load(), tracer.ends.Load(), tracer.releases.Load(); s != 3 || e != 3 || r != 1 {
		t.Errorf("traced %d acquire starts, %d ends, %d releases; want 3, 3 (the With and its two nested takes) and 1", s, e, r)
	}
	testenv.Eventually(t, 10*time.Second, "the connection to be idle", func() bool { return p.Stat().IdleConns() == 1 })
}

type countingTracer struct {
	starts, ends, releases atomic.Int32
}

func (c *countingTracer) TraceAcquireStart(ctx context.Context, _ *Pool, _ TraceAcquireStartData) context.Context {
	c.starts.Add(1)
	return ctx
}

func (c *countingTracer) TraceAcquireEnd(context.Context, *Pool, TraceAcquireEndData) { c.ends.Add(1) }
func (c *countingTracer) TraceRelease(*Pool, TraceReleaseData)                        { c.releases.Add(1) }

// ConnConfig.Tracer is a pgx.QueryTracer, which the pool's tracers extend.
func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestTakeErrors checks that a take returns the errors pgxpool returns, as
// they are: the context's own error, the connect's own, and
// actorpool.ErrClosed for a closed pool.
func TestTakeErrors(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	p, refusing, refuse := newRefusablePool(t, dsn)
	held, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); err != context.DeadlineExceeded {
		t.Errorf("Acquire past its deadline = %v, want context.DeadlineExceeded itself", err)
	}
	held.Destroy()
	refusing.Store(true)
	if err := p.Ping(context.Background()); err != refuse {
		t.Errorf("Ping while BeforeConnect fails = %v, want its error itself", err)
	}
	p.Close()
	_, err = p.Acquire(context.Background())
	if !errors.Is(err, actorpool.ErrClosed) || !errors.Is(err, puddle.ErrClosedPool) || err.Error() != "closed pool" {
		t.Errorf("Acquire on a closed pool = %v, want an error matching actorpool.ErrClosed and pgxpool's puddle.ErrClosedPool", err)
	}
}

// TestHijack checks that a hijacked connection leaves the pool at once,
// outlives it, and makes room for a new one.
func TestHijack(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	var closes atomic.Int32
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns = 1
		c.BeforeClose = func(*pgx.Conn) { closes.Add(1) }
	})
	ctx := context.Background()
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.Hijack()
	defer conn.Close(ctx)
	if n := p.Stat().TotalConns(); n != 0 {
		t.Errorf("TotalConns right after Hijack = %d, want 0", n)
	}
	if c.Conn() != nil {
		t.Error("the Conn still gives the hijacked connection")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second Hijack did not panic")
			}
		}()
		c.Hijack()
	}()
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("Ping on a pool of one after its connection was hijacked: %v", err)
	}
	p.Close()
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Errorf("the hijacked connection after Close: %v", err)
	}
	if n := closes.Load(); n != 1 {
		t.Errorf("BeforeClose ran %d times, want once, for the pool's second connection only", n)
	}
	if s := p.Stats(); s.Hijacked != 1 {
		t.Errorf("Stats.Hijacked = %d, want 1", s.Hijacked)
	}
}

type ctxKey struct{}

// TestConnectSeesNewContext checks that connects see the values of the
// context given to New, and not its cancellation, as pgxpool's do.
func TestConnectSeesNewContext(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	cfg, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan any, 2)
	cfg.BeforeConnect = func(ctx context.Context, _ *pgx.ConnConfig) error {
		got <- ctx.Value(ctxKey{})
		return nil
	}
	cfg.AfterConnect = func(ctx context.Context, _ *pgx.Conn) error {
		got <- ctx.Value(ctxKey{})
		return nil
	}
	cfg.MinIdleConns = 1
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "from New"))
	p, err := NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cancel()
	for range 2 {
		if v := <-got; v != "from New" {
			t.Errorf("a hook's context value = %v, want New's", v)
		}
	}
	if err := p.Ping(context.Background()); err != nil {
		t.Errorf("Ping after New's context ended: %v", err)
	}
}

// TestPostgresPrepareConnErrorKeepsConn checks that a connection
// PrepareConn keeps while failing the take (true and an error) goes
// straight back to the pool, as pgxpool puts it back: the caller never
// had it, so it is not traced as released, nor passed to AfterRelease.
func TestPostgresPrepareConnErrorKeepsConn(t *testing.T) {
	dsn := testenv.Postgres(t)
	tracer := &countingTracer{}
	refuse := errors.New("not now")
	var afterRelease atomic.Int32
	p := newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns = 1
		c.ConnConfig.Tracer = tracer
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) { return true, refuse }
		c.AfterRelease = func(*pgx.Conn) bool { afterRelease.Add(1); return true }
	})
	if _, err := p.Acquire(context.Background()); err != refuse {
		t.Fatalf("Acquire = %v, want PrepareConn's error", err)
	}
	if r := tracer.releases.Load(); r != 0 {
		t.Errorf("traced %d releases, want 0: the connection was never lent", r)
	}
	testenv.Eventually(t, 10*time.Second, "the connection to be idle", func() bool { return p.Stat().IdleConns() == 1 })
	if a := afterRelease.Load(); a != 0 {
		t.Errorf("AfterRelease called %d times, want 0: the connection was never lent", a)
	}
	if st := p.Stats(); st.Destroyed != 0 || st.Created != 1 {
		t.Errorf("created %d, destroyed %d; want 1 kept", st.Created, st.Destroyed)
	}
}

// TestPostgresStatCounts checks Stat's counters where pgxpool's count
// differently from the actorpool counts under them: a take whose context
// had already ended counts as canceled, and AcquireAllIdle counts no take.
func TestPostgresStatCounts(t *testing.T) {
	dsn := testenv.Postgres(t)
	p := newPGPool(t, dsn, testName(), func(c *Config) { c.MaxConns = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Acquire(ctx); err != context.Canceled {
		t.Fatalf("Acquire on a canceled context = %v, want context.Canceled", err)
	}
	if n := p.Stat().CanceledAcquireCount(); n != 1 {
		t.Errorf("CanceledAcquireCount after a take on a canceled context = %d, want 1", n)
	}
	if err := p.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := p.Stat().AcquireCount(); n != 1 {
		t.Fatalf("AcquireCount after a Ping = %d, want 1", n)
	}
	conns := p.AcquireAllIdle(context.Background())
	if len(conns) != 1 {
		t.Fatalf("AcquireAllIdle took %d connections, want 1", len(conns))
	}
	for _, c := range conns {
		c.Release()
	}
	if n := p.Stat().AcquireCount(); n != 1 {
		t.Errorf("AcquireCount after AcquireAllIdle = %d, want 1: pgxpool's AcquireAllIdle updates no statistics", n)
	}
	if n := p.Stat().CanceledAcquireCount(); n != 1 {
		t.Errorf("CanceledAcquireCount at the end = %d, want 1", n)
	}
}

// TestPostgresEmptyAcquireCountCountsSuccesses checks that
// EmptyAcquireCount counts, as pgxpool's does, the takes that found no idle
// connection and got one, waiting or connecting: not those that failed,
// past their deadline or on a failed connect.
func TestPostgresEmptyAcquireCountCountsSuccesses(t *testing.T) {
	dsn := testenv.Postgres(t)
	p, refusing, refuse := newRefusablePool(t, dsn)
	held, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Stat().EmptyAcquireCount(); n != 1 {
		t.Fatalf("EmptyAcquireCount after a take that connected = %d, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Acquire past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if n := p.Stat().EmptyAcquireCount(); n != 1 {
		t.Errorf("EmptyAcquireCount after a take that timed out = %d, want 1", n)
	}
	held.Destroy()
	refusing.Store(true)
	if _, err := p.Acquire(context.Background()); err != refuse {
		t.Fatalf("Acquire while BeforeConnect fails = %v, want its error", err)
	}
	if n := p.Stat().EmptyAcquireCount(); n != 1 {
		t.Errorf("EmptyAcquireCount after a take whose connect failed = %d, want 1", n)
	}
	refusing.Store(false)
	if held, err = p.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	held.Release()
	if n := p.Stat().EmptyAcquireCount(); n != 2 {
		t.Errorf("EmptyAcquireCount after a take that connected = %d, want 2", n)
	}
}

// While connects fail, a take that ends waiting for the pool's next
// connect returns an error that is both its context's and that of the last
// connect, as pgxpool's take, which connects itself, would mostly have
// returned the connect's error. Nothing listens on the port.
func TestTakeDuringOutageReturnsConnectError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg, err := ParseConfig("postgres://postgres@" + addr + "/postgres?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pool.Logger = slog.New(slog.DiscardHandler)
	p, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		c, err := p.Acquire(ctx)
		cancel()
		if err == nil {
			c.Release()
			t.Fatalf("took a connection from %s, where nothing listens", addr)
		}
		var ce *pgconn.ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("Acquire during an outage = %q (%T), want a *pgconn.ConnectError", err, err)
		}
		if errors.As(err, new(*actorpool.WaitError)) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire that timed out = %q, want it to match context.DeadlineExceeded too", err)
		}
	}
}

// newRefusablePool returns a pool of one connection whose connects fail
// with refuse while refusing is set, as BeforeConnect makes them.
func newRefusablePool(t *testing.T, dsn string) (p *Pool, refusing *atomic.Bool, refuse error) {
	refuse = errors.New("no password to hand")
	refusing = new(atomic.Bool)
	p = newPGPool(t, dsn, testName(), func(c *Config) {
		c.MaxConns = 1
		c.BeforeConnect = func(context.Context, *pgx.ConnConfig) error {
			if refusing.Load() {
				return refuse
			}
			return nil
		}
	})
	return p, refusing, refuse
}
