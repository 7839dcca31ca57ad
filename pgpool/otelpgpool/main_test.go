package otelpgpool_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgpool"
)

// TestMain leaves out the examples, which talk to a real PostgreSQL, when
// ACTORPOOL_POSTGRES is unset.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunSkippingExamples(m, "otelpgpool", testenv.PostgresVar, "a PostgreSQL server", testenv.PostgresExample))
}

// testPoolName is the Config.Pool.Name of the tests' pools, and so their
// db.client.connection.pool.name.
const testPoolName = "otelpgpool-test"

// newPool returns a pool on the test server with tracer as its
// ConnConfig's Tracer (none if nil), changed by tune, shut down when t
// ends.
func newPool(t testing.TB, tracer pgx.QueryTracer, tune func(*pgpool.Config)) *pgpool.Pool {
	t.Helper()
	cfg, err := pgpool.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pool.Name = testPoolName
	cfg.HealthCheckPeriod = 0 // no pings in the background to change the counts
	cfg.ConnConfig.Tracer = tracer
	if tune != nil {
		tune(cfg)
	}
	p, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 20*time.Second, p.Shutdown)
	return p
}

// waitForWaiters waits until n takes are queued on p.
func waitForWaiters(t testing.TB, p *pgpool.Pool, n int) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "a queued take", func() bool { return p.Stats().Waiting == n })
}
