package pgactor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// TestMigrate checks that migrating twice does nothing the second time,
// that processes migrating at once apply each migration once, and that a
// schema newer than the library is left alone.
func TestMigrate(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPool(t, testenv.Postgres(t), 12)
	ctx := t.Context()
	schema := newSchema(t, p) // migrated once
	if from, to, err := Migrate(ctx, p, schema); err != nil || from != SchemaVersion || to != SchemaVersion {
		t.Errorf("second Migrate: %d → %d, %v; want nothing done", from, to, err)
	}

	fresh := newSchema(t, p)
	if _, err := p.Exec(ctx, "DROP SCHEMA "+fresh+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	if v, err := Version(ctx, p, fresh); err != nil || v != 0 {
		t.Fatalf("version of a dropped schema: %d, %v", v, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 8 {
		wg.Go(func() {
			c, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			from, to, err := Migrate(c, p, fresh)
			if err != nil || to != SchemaVersion {
				t.Errorf("concurrent Migrate: %d → %d, %v", from, to, err)
			}
			if from == 0 {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var rows int
	if err := p.QueryRow(ctx, "SELECT count(*) FROM "+fresh+".schema_version").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if firsts != 1 || rows != 1 {
		t.Errorf("8 concurrent migrations: %d started from version 0, %d version rows; want 1 and 1", firsts, rows)
	}

	if _, err := p.Exec(ctx, "INSERT INTO "+schema+".schema_version (version) VALUES (99)"); err != nil {
		t.Fatal(err)
	}
	if from, to, err := Migrate(ctx, p, schema); err != nil || from != 99 || to != 99 {
		t.Errorf("Migrate of a newer schema: %d → %d, %v; want it left alone", from, to, err)
	}
	if _, _, err := Migrate(ctx, p, "No Good"); err == nil {
		t.Error("Migrate of a badly named schema succeeded")
	}
}

// TestMigrateAfterWaiting checks that a Migrate that waited for another
// process's migration finds that migration done, even on a connection
// that looked the schema up, and found it missing, before the wait:
// PostgreSQL does not read other sessions' catalog changes while it waits
// for an advisory lock, so such a connection's first try still believes
// the schema missing, and creating it fails on the one just committed.
func TestMigrateAfterWaiting(t *testing.T) {
	testenv.CheckGoroutines(t)
	dsn := testenv.Postgres(t)
	p := newPool(t, dsn, 2)
	ctx := t.Context()
	schema := newSchema(t, p)
	if _, err := p.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	waiter, first := connect(), connect()
	if v, err := Version(ctx, waiter, schema); err != nil || v != 0 {
		t.Fatalf("version of a dropped schema: %d, %v", v, err)
	}

	// The first migration holds the lock until the waiter waits for it.
	tx, err := first.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if err := (&store{schema: schema}).lockMigrations(ctx, tx); err != nil {
		t.Fatal(err)
	}
	type result struct {
		from, to int
		err      error
	}
	done := make(chan result, 1)
	go func() {
		from, to, err := Migrate(ctx, waiter, schema)
		done <- result{from, to, err}
	}()
	eventually(t, 10*time.Second, "the second Migrate waits for the lock", func() bool {
		var n int
		err := p.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = $1", waiter.PgConn().PID()).Scan(&n)
		return err == nil && n == 1
	})
	if from, to, err := Migrate(ctx, tx, schema); err != nil || from != 0 || to != SchemaVersion {
		t.Fatalf("first Migrate: %d → %d, %v", from, to, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.from != SchemaVersion || r.to != SchemaVersion {
		t.Errorf("Migrate that waited for another: %d → %d, %v; want nothing done", r.from, r.to, r.err)
	}
}

// TestMigrateFromVersion1 checks that a schema an older library left at
// version 1, with tasks waiting and one leased to a worker that died,
// migrates to the current version in place, and that every task then
// runs once — the dead worker's after its lease ran out — through the
// fetch function the new version replaced.
func TestMigrateFromVersion1(t *testing.T) {
	r := newRig(t)
	ctx := t.Context()
	if _, err := r.pool.Exec(ctx, "DROP SCHEMA "+r.schema+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	if from, to, err := migrateTo(ctx, r.pool, r.schema, 1); err != nil || from != 0 || to != 1 {
		t.Fatalf("migrate to version 1: %d → %d, %v", from, to, err)
	}
	for _, payload := range []string{"1", "2", "3"} {
		if _, err := r.pool.Exec(ctx, expand(r.schema, `INSERT INTO {s}.tasks (actor, type, payload, available_at) VALUES ('old', 'int', $1, now())`), []byte(payload)); err != nil {
			t.Fatal(err)
		}
	}
	// A worker of the older library takes a task, with a lease of 1µs,
	// and dies.
	var taken int
	if err := r.pool.QueryRow(ctx, "SELECT count(*) FROM "+r.schema+".fetch('old', 1, 'dead-owner', 1)").Scan(&taken); err != nil || taken != 1 {
		t.Fatalf("version 1's fetch: %d tasks, %v", taken, err)
	}
	if _, err := New(ctx, r.pool, "old", nil, Config[int]{Schema: r.schema}); !errors.Is(err, ErrNoSchema) {
		t.Fatalf("New on a version 1 schema: %v, want ErrNoSchema", err)
	}

	if from, to, err := Migrate(ctx, r.pool, r.schema); err != nil || from != 1 || to != SchemaVersion {
		t.Fatalf("Migrate from version 1: %d → %d, %v; want 1 → %d", from, to, err, SchemaVersion)
	}
	ran := make(chan int, 3)
	a := start(r, "old", forward(ran), Config[int]{Workers: 2, PollInterval: 10 * time.Millisecond})
	got := map[int]bool{}
	for range 3 {
		select {
		case p := <-ran:
			got[p] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("after migrating from version 1, ran %v; want 1, 2 and 3", got)
		}
	}
	eventually(t, 10*time.Second, "three completions and one lost run counted", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 3 && s.Lost == 1
	})
}

// releasedMigrations are the SHA-256 sums of the migrations released, by
// version. A released migration has run on servers and is never changed:
// a change goes in a new migration, whose sum is added here when it is
// released.
var releasedMigrations = map[int]string{
	1: "0fbc41b16b0229500ff7e46cee90376f00309f86078e751fa0b529161fb52d22",
	2: "ef1a1a8798b9ca2b20fe01c635fd4f2726ec9438e65bede52382fda164ef9796",
	3: "679d5ed67bec4f5312156ae88ce0e8bc34d99a9761807fe6d3a074dd29db8c6a",
	4: "a9a32ffba49faaf2fa3a7409396cfe89ca1afc49e3db0054f50beb819f7b8ed5",
	5: "af83d7db45b8315f32e8e5b8bbbe8d511d4bf254a5d3bd4dccb26809133f84e3",
}

// TestMigrationsReleased checks that no released migration's text has
// changed, and that every migration is listed as released.
func TestMigrationsReleased(t *testing.T) {
	for v := 1; v < len(migrations); v++ {
		want, ok := releasedMigrations[v]
		if !ok {
			t.Errorf("migration %d is not in releasedMigrations: add its sum, %x, when it is released", v, sha256.Sum256([]byte(migrations[v])))
			continue
		}
		if got := fmt.Sprintf("%x", sha256.Sum256([]byte(migrations[v]))); got != want {
			t.Errorf("released migration %d changed: its SHA-256 is %s, was %s; put the change in a new migration", v, got, want)
		}
	}
	for v := range releasedMigrations {
		if v >= len(migrations) {
			t.Errorf("released migration %d is missing", v)
		}
	}
}

// TestMigrationFiles checks that SchemaVersion is the last migration, and
// that loadMigrations refuses a folder whose files are misnamed or leave a
// version out.
func TestMigrationFiles(t *testing.T) {
	if SchemaVersion != len(migrations)-1 {
		t.Errorf("SchemaVersion is %d, but migrations/ holds %d migrations", SchemaVersion, len(migrations)-1)
	}
	sql := &fstest.MapFile{Data: []byte("SELECT 1;")}
	for _, tt := range []struct {
		files   []string
		refused bool
	}{
		{[]string{"0001_a.sql", "0002_b.sql"}, false},
		{[]string{"0001_a.sql", "0003_c.sql"}, true},
		{[]string{"0002_b.sql"}, true},
		{[]string{"1_a.sql"}, true},
		{[]string{"0001.sql"}, true},
		{[]string{"0001_a.sql", "0001_b.sql"}, true},
	} {
		fsys := fstest.MapFS{}
		for _, f := range tt.files {
			fsys["migrations/"+f] = sql
		}
		func() {
			defer func() {
				if v := recover(); (v != nil) != tt.refused {
					t.Errorf("loadMigrations(%v): panic %v, want refused %v", tt.files, v, tt.refused)
				}
			}()
			if got := loadMigrations(fsys); len(got) != len(tt.files)+1 {
				t.Errorf("loadMigrations(%v) = %d migrations", tt.files, len(got)-1)
			}
		}()
	}
}
