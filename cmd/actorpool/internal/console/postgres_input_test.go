package console

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
)

// TestPostgresInputNoTaskHas proves that on PostgreSQL, a filter or an
// actor name that no task or actor can have — text that is not UTF-8 or
// holds a NUL, which pgactor never stores, or a cursor past the largest
// task ID — is answered as matching nothing (an empty page, or 404 for
// an actor), not as a failure of the server, 500, with the database's
// error.
func TestPostgresInputNoTaskHas(t *testing.T) {
	dsn := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pool := newPool(t, dsn)
	schema := newSchema(t, pool)
	q, err := pgactor.New[mail](ctx, pool, "queue", nil, pgactor.Config[mail]{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, q.Close)
	if _, err := q.Send(ctx, mail{To: "ann"}); err != nil {
		t.Fatal(err)
	}
	pa, err := pgactor.NewAdmin(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, Postgres(pa), Options{})
	for _, tt := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", "/tasks?key=%00", 200, "No task matches"},
		{"GET", "/tasks?key=%FF", 200, "No task matches"},
		{"GET", "/tasks?after=18446744073709551615", 200, "No task matches"},
		{"GET", "/tasks?after=9223372036854775808&actor=queue", 200, "No task matches"},
		{"POST", "/actors/%00/pause", 404, "unknown actor"},
		{"POST", "/actors/a%FFb/resume", 404, "unknown actor"},
	} {
		r := do(t, srv, tt.method, tt.path, nil, nil)
		if r.status != tt.status || !strings.Contains(r.body, tt.want) || strings.Contains(r.body, "SQLSTATE") {
			t.Errorf("%s %s: %d, want %d with %q\n%s", tt.method, tt.path, r.status, tt.status, tt.want, r.body)
		}
	}
}
