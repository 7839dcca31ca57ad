package pgactor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
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
