package otelpgactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// TestMain leaves out the examples, which talk to a real PostgreSQL, when
// ACTORPOOL_POSTGRES is unset.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunSkippingExamples(m, "otelpgactor", testenv.PostgresVar, "a PostgreSQL server", testenv.PostgresExample))
}

// newPool returns a pool of its own on the test server, as another
// process would have, shut down when t ends.
func newPool(t testing.TB) *pgpool.Pool {
	t.Helper()
	cfg, err := pgpool.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	p, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 20*time.Second, p.Shutdown)
	return p
}

var schemaSeq atomic.Int64

// newSchema migrates a schema of the test's own on p, dropped when t ends.
func newSchema(t testing.TB, p *pgpool.Pool) string {
	t.Helper()
	schema := fmt.Sprintf("otelpgactor_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	if _, _, err := pgactor.Migrate(t.Context(), p, schema); err != nil {
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

// start returns the actor name in schema on p, closed when t ends, with
// quick polling and retries unless cfg says otherwise.
func start[T any](t testing.TB, p *pgpool.Pool, schema, name string, h actor.Handler[T], cfg pgactor.Config[T]) *pgactor.Actor[T] {
	t.Helper()
	cfg.Schema = schema
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 10 * time.Millisecond
	}
	if cfg.MaxAttempts > 1 && cfg.Backoff == (actor.Backoff{}) {
		cfg.Backoff = actor.Backoff{Initial: time.Millisecond}
	}
	if cfg.OnError == nil {
		cfg.OnError = func(*actor.TaskError) {}
	}
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	a, err := pgactor.New(t.Context(), p, name, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 20*time.Second, a.Close)
	return a
}
