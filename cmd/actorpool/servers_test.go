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

	c, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	left, err := redis.Strings(c.Do("KEYS", "actorpool-demo:*:audit"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("the demo left its audit lists behind: %v", left)
	}
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

	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'actorpool_demo_%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the demo left %d schemas actorpool_demo_* behind", n)
	}
}
