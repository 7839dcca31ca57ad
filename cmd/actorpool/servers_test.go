package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/jackc/pgx/v5"

	"github.com/actorpool/actorpool/internal/testenv"
)

// TestDemoUnreachable proves that a server that cannot be reached stops
// the demo at once with exit code 1 and a message that says what to do.
func TestDemoUnreachable(t *testing.T) {
	addr := testenv.FreeAddr(t)
	o := runCmd(t, nil, "demo", "--redis", addr, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "cannot reach Redis at "+addr) || !strings.Contains(o.stderr, "Leave out --redis to use the embedded one") {
		t.Errorf("want exit 1 saying the server cannot be reached\n%v", o)
	}
	o = runCmd(t, nil, "demo", "--postgres", "postgres://nobody@"+addr+"/none?sslmode=disable&connect_timeout=2", "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "cannot prepare PostgreSQL at") {
		t.Errorf("want exit 1 saying the server cannot be reached\n%v", o)
	}
	o = runCmd(t, nil, "demo", "--postgres", "mysql://x", "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "--postgres: ") {
		t.Errorf("want exit 1 saying the DSN is wrong\n%v", o)
	}
}

// TestDemoRedis runs the demo against the Redis server of
// ACTORPOOL_REDIS, and checks that it removes what it wrote.
func TestDemoRedis(t *testing.T) {
	addr := testenv.Redis(t)
	o := runCmd(t, nil, "demo", "--redis", addr, "--duration", "2s", "--clients", "8", "--size", "4")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if !strings.Contains(o.stdout, "against Redis at "+addr) {
		t.Errorf("the header does not name the server\n%v", o)
	}
	checkSummary(t, o.stdout)

	prefix := scratchOf(t, o.stdout, "keys ")
	if !strings.HasPrefix(prefix, "actorpool-demo:") || !strings.HasSuffix(prefix, ":*") {
		t.Fatalf("the header names keys %q, want actorpool-demo:<run>:*\n%v", prefix, o)
	}
	c, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Only this run's keys: other runs may share the server.
	left, err := redis.Strings(c.Do("KEYS", prefix))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("the demo left its keys behind: %v", left)
	}
}

// scratchOf returns what the demo's header says the run writes, after
// kind ("keys " or "schema "), failing t when it says nothing.
func scratchOf(t *testing.T, stdout, kind string) string {
	t.Helper()
	_, rest, ok := strings.Cut(stdout, "\n  writes "+kind)
	what, _, ok2 := strings.Cut(rest, ", removed at the end\n")
	if !ok || !ok2 {
		t.Fatalf("the header does not say which %s the run writes\n%s", strings.TrimSpace(kind), stdout)
	}
	return what
}

// TestDemoPostgres runs the demo against the PostgreSQL server of
// ACTORPOOL_POSTGRES, with its durable audit actor in a schema of the
// test's own, and checks that it drops the schema it made for the run.
func TestDemoPostgres(t *testing.T) {
	dsn := testenv.Postgres(t)
	o := runCmd(t, nil, "demo", "--postgres", dsn, "--schema", testSchema(t, dsn), "--duration", "2s", "--clients", "8", "--size", "4")
	if o.code != 0 {
		t.Fatalf("exit code %d, want 0\n%v", o.code, o)
	}
	if !strings.Contains(o.stdout, "against PostgreSQL at ") {
		t.Errorf("the header does not name the server\n%v", o)
	}
	checkSummary(t, o.stdout)

	schema := scratchOf(t, o.stdout, "schema ")
	if !strings.HasPrefix(schema, "actorpool_demo_") {
		t.Fatalf("the header names schema %q, want actorpool_demo_<run>\n%v", schema, o)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// Only this run's schema: other runs may share the server.
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the demo left its schema %s behind", schema)
	}
}
