package pgactor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// The shape both actors share as they are: a name, and a Close that
// drains. Sending goes through their Sender methods.
type lifecycle interface {
	Name() string
	Close(ctx context.Context) error
}

var (
	_ lifecycle = (*actor.Actor[int])(nil)
	_ lifecycle = (*Actor[int])(nil)
)

// program is one program body, compiled once, that runs whichever actor
// it is given: it sends each payload through s and closes a, then
// returns what its handler's tasks recorded.
func program(ctx context.Context, a lifecycle, s actor.Sender[int], payloads []int) error {
	for _, p := range payloads {
		if err := s.Send(ctx, p); err != nil {
			return err
		}
	}
	return a.Close(ctx)
}

// TestOneShape runs program, and one handler, on the in-memory actor and
// on a durable one, against PostgreSQL, and checks that both run every
// task once and refuse a send after Close.
func TestOneShape(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	var seen map[int]int
	// One handler for both actors.
	handler := func(_ context.Context, task actor.Task[int]) error {
		mu.Lock()
		seen[task.Payload]++
		mu.Unlock()
		return nil
	}
	for _, tt := range []struct {
		name string
		make func() (lifecycle, actor.Sender[int])
	}{
		{"in memory", func() (lifecycle, actor.Sender[int]) {
			a, err := actor.New("shape", handler, actor.Config[int]{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			return a, a.Sender()
		}},
		{"durable", func() (lifecycle, actor.Sender[int]) {
			a, err := New(context.Background(), r.pool, "shape", handler, Config[int]{Workers: 2, Schema: r.schema, Logger: quiet(t)})
			if err != nil {
				t.Fatal(err)
			}
			return a, a.Sender()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = map[int]int{}
			mu.Unlock()
			a, s := tt.make()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			payloads := []int{1, 2, 3, 4, 5}
			// The durable actor's Close does not wait for queued tasks, so
			// the test waits for them before program closes it.
			if err := program(ctx, a, actor.SenderFunc[int](func(ctx context.Context, p int) error {
				if err := s.Send(ctx, p); err != nil {
					return err
				}
				if p == payloads[len(payloads)-1] {
					eventually(t, 30*time.Second, "every task run", func() bool {
						mu.Lock()
						defer mu.Unlock()
						return len(seen) == len(payloads)
					})
				}
				return nil
			}), payloads); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			var ran []int
			for p, n := range seen {
				if n != 1 {
					t.Errorf("task %d ran %d times", p, n)
				}
				ran = append(ran, p)
			}
			mu.Unlock()
			slices.Sort(ran)
			if !slices.Equal(ran, payloads) {
				t.Errorf("ran %v, want %v", ran, payloads)
			}
			if err := s.Send(ctx, 6); !errors.Is(err, actor.ErrClosed) {
				t.Errorf("Send after Close = %v, want actor.ErrClosed", err)
			}
		})
	}
}
