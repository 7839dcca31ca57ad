package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
)

var schemaSeq atomic.Int64

// testSchema returns a schema name of the test's own, on the shared
// server, and drops the schema when t ends.
func testSchema(t *testing.T, dsn string) string {
	t.Helper()
	schema := fmt.Sprintf("actorpool_cmd_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	t.Cleanup(func() { execSQL(t, dsn, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	return schema
}

// execSQL runs sql on a connection of its own to dsn.
func execSQL(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// schemaVersion returns the version of schema's tables, 0 when none.
func schemaVersion(t *testing.T, dsn, schema string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	v, err := pgactor.Version(ctx, c, schema)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMigrateUsage proves that the command answers help and mistakes
// before it connects to anything.
func TestMigrateUsage(t *testing.T) {
	for _, tt := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{args: []string{"help", "migrate"}, code: 0, stdout: "actorpool migrate --postgres URL [--schema NAME]"},
		{args: []string{"migrate", "--help"}, code: 0, stdout: `(default "pgactor")`},
		{args: []string{"migrate"}, code: 2, stderr: "--postgres is required"},
		{args: []string{"migrate", "--postgres", "mysql://x"}, code: 2, stderr: "--postgres: cannot parse"},
		{args: []string{"migrate", "--postgres", "postgres://x", "now"}, code: 2, stderr: `unexpected argument "now"`},
		{args: []string{"help"}, code: 0, stdout: "actorpool migrate --postgres URL  create or upgrade"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o := runCmd(t, nil, tt.args...)
			if o.code != tt.code || !strings.Contains(o.stdout, tt.stdout) || !strings.Contains(o.stderr, tt.stderr) {
				t.Errorf("want exit %d, stdout containing %q, stderr containing %q\n%v", tt.code, tt.stdout, tt.stderr, o)
			}
		})
	}
}

// TestMigrate proves that migrate creates the schema, says from which
// version to which, finds nothing to do the second time, and that two
// processes migrating one schema at once both succeed and migrate it once.
func TestMigrate(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := testSchema(t, dsn)
	o := runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", schema)
	want := fmt.Sprintf("schema %q at 127.0.0.1:5432/postgres: migrated from version 0 to %d\n", schema, pgactor.SchemaVersion)
	if o.code != 0 || !strings.HasSuffix(o.stdout, ": migrated from version 0 to "+fmt.Sprint(pgactor.SchemaVersion)+"\n") || o.stderr != "" {
		t.Errorf("want exit 0 and %q\n%v", want, o)
	}
	if v := schemaVersion(t, dsn, schema); v != pgactor.SchemaVersion {
		t.Errorf("schema at version %d after migrate, want %d", v, pgactor.SchemaVersion)
	}
	o = runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", schema)
	if o.code != 0 || !strings.Contains(o.stdout, fmt.Sprintf(": at version %d already, nothing to do", pgactor.SchemaVersion)) {
		t.Errorf("want exit 0 saying there is nothing to do\n%v", o)
	}

	fresh := testSchema(t, dsn)
	var wg sync.WaitGroup
	outs := make([]outcome, 3)
	for i := range outs {
		wg.Go(func() { outs[i] = runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", fresh) })
	}
	wg.Wait()
	migrated := 0
	for _, o := range outs {
		if o.code != 0 {
			t.Errorf("a concurrent migrate failed\n%v", o)
		}
		if strings.Contains(o.stdout, "migrated from version 0") {
			migrated++
		}
	}
	if migrated != 1 {
		t.Errorf("%d of %d concurrent migrates say they migrated the schema, want 1\n%v\n%v\n%v", migrated, len(outs), outs[0], outs[1], outs[2])
	}
}

// TestMigrateNewer proves that a schema migrated by a newer release is
// reported as such, with exit 1, and left as it is.
func TestMigrateNewer(t *testing.T) {
	dsn := testenv.Postgres(t)
	schema := testSchema(t, dsn)
	if o := runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", schema); o.code != 0 {
		t.Fatalf("migrate: %v", o)
	}
	newer := pgactor.SchemaVersion + 1
	execSQL(t, dsn, "INSERT INTO "+schema+".schema_version (version) VALUES ($1)", newer)
	o := runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", schema)
	if o.code != 1 || !strings.Contains(o.stderr, fmt.Sprintf("is at version %d, newer than this actorpool knows (%d)", newer, pgactor.SchemaVersion)) ||
		!strings.Contains(o.stderr, "nothing was changed") {
		t.Errorf("want exit 1 saying the schema is newer\n%v", o)
	}
	if v := schemaVersion(t, dsn, schema); v != newer {
		t.Errorf("schema at version %d, want it left at %d", v, newer)
	}
}

// TestMigrateRefused proves that a server that refuses the connection and
// a role that may not create the schema each fail the command with exit 1
// and a message that says what is wrong and what to do; a schema name
// pgactor refuses is a usage error, exit 2.
func TestMigrateRefused(t *testing.T) {
	addr := testenv.FreeAddr(t)
	o := runCmd(t, nil, "migrate", "--postgres", "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if o.code != 1 || !strings.Contains(o.stderr, "cannot connect to PostgreSQL at "+addr+"/postgres") ||
		!strings.Contains(o.stderr, "connection refused") || !strings.Contains(o.stderr, "is the server running") {
		t.Errorf("want exit 1 saying the server refused the connection\n%v", o)
	}

	dsn := testenv.Postgres(t)
	schema := testSchema(t, dsn)
	role := fmt.Sprintf("actorpool_cmd_test_role_%d", os.Getpid())
	execSQL(t, dsn, "DROP ROLE IF EXISTS "+role)
	execSQL(t, dsn, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { execSQL(t, dsn, "DROP ROLE IF EXISTS "+role) })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	o = runCmd(t, nil, "migrate", "--postgres", u.String(), "--schema", schema)
	if o.code != 1 || !strings.Contains(o.stderr, fmt.Sprintf("role %q may not migrate schema %q", role, schema)) ||
		!strings.Contains(o.stderr, "permission denied") || !strings.Contains(o.stderr, "GRANT CREATE ON DATABASE") {
		t.Errorf("want exit 1 saying the role lacks the privilege\n%v", o)
	}
	if v := schemaVersion(t, dsn, schema); v != 0 {
		t.Errorf("schema at version %d after a refused migrate, want none", v)
	}

	o = runCmd(t, nil, "migrate", "--postgres", dsn, "--schema", "Audit-Log")
	if o.code != 2 || !strings.Contains(o.stderr, `--schema "Audit-Log": must be 1 to 63 lower-case letters`) {
		t.Errorf("want exit 2 saying what a schema name may be\n%v", o)
	}
}
