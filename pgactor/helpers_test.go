package pgactor

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

var schemaSeq atomic.Int64

// newPool returns a pool on dsn of at most conns connections, closed when t
// ends.
func newPool(t testing.TB, dsn string, conns int) *pgpool.Pool {
	t.Helper()
	return newPoolSetting(t, dsn, conns, nil)
}

// newPoolSetting is newPool with each session started with the server's
// settings in settings, by name.
func newPoolSetting(t testing.TB, dsn string, conns int, settings map[string]string) *pgpool.Pool {
	t.Helper()
	cfg, err := pgpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = int32(conns)
	for name, value := range settings {
		cfg.ConnConfig.RuntimeParams[name] = value
	}
	cfg.Pool.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	p, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("close the pool: %v", err)
		}
	})
	return p
}

// newSchema migrates a schema of the test's own and drops it when t ends.
func newSchema(t testing.TB, p *pgpool.Pool) string {
	t.Helper()
	schema := fmt.Sprintf("pgactor_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Migrate(ctx, p, schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// rig is a test's database: a pool and a schema of its own.
type rig struct {
	t      testing.TB
	dsn    string
	pool   *pgpool.Pool
	schema string
}

func newRig(t testing.TB) *rig {
	t.Helper()
	testenv.CheckGoroutines(t)
	return rigOn(t, testenv.Postgres(t))
}

// rigOn returns a rig on the database dsn names.
func rigOn(t testing.TB, dsn string) *rig {
	t.Helper()
	p := newPool(t, dsn, 8)
	return &rig{t: t, dsn: dsn, pool: p, schema: newSchema(t, p)}
}

// newDatabaseRig is newRig in a database of the test's own, dropped when
// t ends. VACUUM keeps every row version that a transaction open anywhere
// in the same database might still see, so a test of what it removes
// needs a database in which no other test's transactions run.
func newDatabaseRig(t testing.TB) *rig {
	t.Helper()
	testenv.CheckGoroutines(t)
	base := testenv.Postgres(t)
	name := fmt.Sprintf("pgactor_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	admin, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return rigOn(t, withDatabase(base, name))
}

// withDatabase returns dsn, a URL or keyword/value connection string,
// naming database db.
func withDatabase(dsn, db string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + db
		return u.String()
	}
	return dsn + " dbname=" + db
}

// quiet is a logger for the actors of tests that provoke warnings.
func quiet(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
}

// start returns an actor in the rig's schema, closed when the test ends.
func start[T any](r *rig, name string, h actor.Handler[T], cfg Config[T]) *Actor[T] {
	r.t.Helper()
	return startOn(r, r.pool, name, h, cfg)
}

// startOn is start with the actor on pool, as another process would run
// it.
func startOn[T any](r *rig, pool *pgpool.Pool, name string, h actor.Handler[T], cfg Config[T]) *Actor[T] {
	r.t.Helper()
	cfg.Schema = r.schema
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(r.t.Output(), nil))
	}
	if cfg.OnError == nil {
		cfg.OnError = func(*actor.TaskError) {}
	}
	a, err := New(context.Background(), pool, name, h, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			r.t.Errorf("close %s: %v", name, err)
		}
	})
	return a
}

// forward returns a handler that sends each task's payload on ch.
func forward[T any](ch chan<- T) actor.Handler[T] {
	return func(_ context.Context, task actor.Task[T]) error {
		ch <- task.Payload
		return nil
	}
}

// record returns a handler that adds each task's payload to l.
func record[T comparable](l *ledger[T]) actor.Handler[T] {
	return func(_ context.Context, task actor.Task[T]) error {
		l.add(task.Payload)
		return nil
	}
}

// within returns the next value from ch, failing t with msg when none
// comes within limit.
func within[V any](t testing.TB, ch <-chan V, limit time.Duration, msg string) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatal(msg)
		panic("unreachable")
	}
}

// eventually polls cond until it holds, failing t after limit.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stats reads a's stats, failing t on error, and checks the identity.
func stats[T any](t testing.TB, a *Actor[T]) Stats {
	t.Helper()
	s, err := a.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkIdentity(t, s)
	return s
}

func checkIdentity(t testing.TB, s Stats) {
	t.Helper()
	if sum := s.Completed + s.DeadLettered + uint64(s.Queued+s.Scheduled+s.Running+s.Retrying); s.Accepted != sum {
		t.Errorf("Accepted %d ≠ Completed %d + DeadLettered %d + Queued %d + Scheduled %d + Running %d + Retrying %d = %d",
			s.Accepted, s.Completed, s.DeadLettered, s.Queued, s.Scheduled, s.Running, s.Retrying, sum)
	}
}

// ledger records what handlers saw, for tests to wait on and check.
type ledger[T comparable] struct {
	mu   sync.Mutex
	seen map[T]int
	n    int
}

func (l *ledger[T]) add(v T) {
	l.mu.Lock()
	if l.seen == nil {
		l.seen = make(map[T]int)
	}
	l.seen[v]++
	l.n++
	l.mu.Unlock()
}

func (l *ledger[T]) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func (l *ledger[T]) times(v T) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[v]
}

// admin runs a statement for the test itself, on the rig's pool.
func (r *rig) exec(sql string, args ...any) {
	r.t.Helper()
	if _, err := r.pool.Exec(context.Background(), expand(r.schema, sql), args...); err != nil {
		r.t.Fatalf("%s: %v", sql, err)
	}
}

func (r *rig) count(sql string, args ...any) int {
	r.t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), expand(r.schema, sql), args...).Scan(&n); err != nil {
		r.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// lockWaits returns how many statements on the rig's schema wait for a
// lock, such as a row another transaction locked.
func (r *rig) lockWaits() int {
	r.t.Helper()
	return r.count(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, r.schema)
}

var _ = pgx.ErrNoRows

// poolThroughProxy returns a pool of at most 4 connections to the rig's
// server through a proxy the test can cut, and that proxy; the pool is
// closed when the test ends.
func (r *rig) poolThroughProxy() (*pgpool.Pool, *testenv.Proxy) {
	t := r.t
	t.Helper()
	proxy := testenv.StartProxy(t, "127.0.0.1:0", testenv.PostgresHostPort(t, r.dsn))
	cfg, err := pgpool.ParseConfig(r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
	cfg.MaxConns = int32(4)
	cfg.Pool.Logger = quiet(t)
	p, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, proxy
}
