package actor

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
)

// newActor is New for tests: it fails t on an error, sends the actor's logs
// to t's output, and stops the actor when the test ends.
func newActor[T any](t testing.TB, name string, h Handler[T], cfg Config[T]) *Actor[T] {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	a, err := New(name, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop() })
	return a
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// conserved fails t unless s accounts for every task.
func conserved(t testing.TB, s Stats) {
	t.Helper()
	if got := s.Completed + s.DeadLettered + s.Rejected + uint64(s.Queued+s.Retrying+s.Running+s.Blocked); got != s.Submitted {
		t.Errorf("Submitted = %d, but Completed + DeadLettered + Rejected + Queued + Retrying + Running + Blocked = %d: %+v", s.Submitted, got, s)
	}
}

// record collects values from many goroutines.
type record[E any] struct {
	mu   sync.Mutex
	vals []E
}

func (r *record[E]) add(v E) {
	r.mu.Lock()
	r.vals = append(r.vals, v)
	r.mu.Unlock()
}

func (r *record[E]) get() []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.vals)
}

// payloads returns the payloads of the letters in src.
func payloads[T any](t testing.TB, src Source[T]) []T {
	t.Helper()
	var ps []T
	for l, err := range src.Letters() {
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, l.Task.Payload)
	}
	return ps
}

// letters returns the letters in src.
func letters[T any](t testing.TB, src Source[T]) []DeadLetter[T] {
	t.Helper()
	var ls []DeadLetter[T]
	for l, err := range src.Letters() {
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}
