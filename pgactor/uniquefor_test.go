package pgactor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// longPeriod is UniqueFor's period in the tests: long enough that two
// sends a test makes in a row fall in the same period but once in years.
const longPeriod = 1000 * time.Hour

// TestUniqueFor checks that a second send of a key in the same period is
// refused with the first task's ID, even after that task completed; that
// another key, and the next period, are accepted; and that the refusal
// leaves a caller's transaction usable.
func TestUniqueFor(t *testing.T) {
	r := newRig(t)
	var got ledger[string]
	a := start(r, "hourly", record(&got), Config[string]{})
	first, err := a.Send(t.Context(), "first", UniqueFor("k", longPeriod))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the first task ran", func() bool { return got.count() == 1 })
	_, err = a.Send(t.Context(), "second", UniqueFor("k", longPeriod))
	var de *DuplicateError
	if !errors.As(err, &de) || !errors.Is(err, ErrDuplicate) || de.ID != first || de.Key != "k" || de.Period != longPeriod ||
		!strings.Contains(err.Error(), "in this period of 1000h0m0s") {
		t.Fatalf("second send in the period, after the first completed: %v, want a *DuplicateError naming task %d", err, first)
	}
	if _, err := a.Send(t.Context(), "other key", UniqueFor("k2", longPeriod)); err != nil {
		t.Errorf("another key: %v", err)
	}
	// A transaction that rolls back frees the key; the refusal of a send in
	// one leaves it usable.
	tx, err := r.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendTx(t.Context(), tx, "rolled back", UniqueFor("k3", longPeriod)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendTx(t.Context(), tx, "refused", UniqueFor("k", longPeriod)); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a send in a transaction of a key taken: %v", err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), "after the rollback", UniqueFor("k3", longPeriod)); err != nil {
		t.Errorf("a key whose send was rolled back: %v", err)
	}
	// The period ending: its row moved a period back, as time would have.
	r.exec(`UPDATE {s}.unique_periods SET period_start = period_start - $1::bigint * interval '1 microsecond',
		until = until - $1::bigint * interval '1 microsecond' WHERE key = 'k'`, longPeriod.Microseconds())
	if _, err := a.Send(t.Context(), "next period", UniqueFor("k", longPeriod)); err != nil {
		t.Errorf("the next period: %v", err)
	}
	eventually(t, 10*time.Second, "the tasks ran", func() bool { return got.count() == 4 })
	if s := stats(t, a); s.Accepted != 4 {
		t.Errorf("accepted %d, want 4: refused sends are not accepted", s.Accepted)
	}
	// Maintenance deletes the rows of periods that ended, and only those;
	// a round runs when it wins the election, which a process's own
	// round may have won within the interval.
	eventually(t, 10*time.Second, "maintenance deleted the row of the ended period", func() bool {
		if _, err := a.maintain(t.Context(), a.set.maintainEach); err != nil {
			t.Fatal(err)
		}
		return r.count(`SELECT count(*) FROM {s}.unique_periods WHERE until < now()`) == 0
	})
	if n := r.count(`SELECT count(*) FROM {s}.unique_periods`); n != 3 {
		t.Errorf("%d rows of periods left after maintenance, want 3, for k, k2 and k3", n)
	}
}

// TestUniqueForConcurrent has many senders send one key at once, and
// checks that one task was sent and every other sender was told its ID.
func TestUniqueForConcurrent(t *testing.T) {
	r := newRig(t)
	a := start(r, "once", nil, Config[int]{})
	ids := make(chan uint64, 16)
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			id, err := a.Send(context.Background(), i, UniqueFor("once", longPeriod))
			var de *DuplicateError
			switch {
			case err == nil:
				ids <- id
			case errors.As(err, &de):
				ids <- de.ID
			default:
				errs <- err
			}
		}()
	}
	seen := map[uint64]int{}
	for range 16 {
		select {
		case id := <-ids:
			seen[id]++
		case err := <-errs:
			t.Fatal(err)
		}
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`); n != 1 || len(seen) != 1 {
		t.Errorf("%d tasks sent, senders told of %v; want one task, named to all", n, seen)
	}
}

// TestUniqueForBadInput checks the refusals of UniqueFor's arguments and
// of the sends it cannot join.
func TestUniqueForBadInput(t *testing.T) {
	r := newRig(t)
	a := start(r, "bad", nil, Config[int]{})
	for _, tc := range []struct {
		name string
		send func() error
		want string
	}{
		{"empty key", func() error { _, err := a.Send(t.Context(), 1, UniqueFor("", time.Hour)); return err }, "UniqueFor: the key is empty"},
		{"zero period", func() error { _, err := a.Send(t.Context(), 1, UniqueFor("k", 0)); return err }, "the period must be at least 1µs, got 0s"},
		{"negative period", func() error { _, err := a.Send(t.Context(), 1, UniqueFor("k", -time.Hour)); return err }, "got -1h0m0s"},
		{"batch", func() error { _, err := a.SendBatch(t.Context(), []int{1, 2}, UniqueFor("k", time.Hour)); return err }, "SendBatch to \"bad\": UniqueFor would give"},
		{"with UniqueKey", func() error {
			_, err := a.Send(t.Context(), 1, UniqueFor("k", time.Hour), UniqueKey("k"))
			return err
		}, "UniqueKey and UniqueFor together"},
	} {
		if err := tc.send(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "pgactor: ") {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`) + r.count(`SELECT count(*) FROM {s}.unique_periods`); n != 0 {
		t.Errorf("refused sends stored %d rows", n)
	}
}
