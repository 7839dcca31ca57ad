package actor

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestSender sends through an actor's Sender and through a SenderFunc,
// and checks that the tasks arrive, and that the errors of the actor's
// Send come back.
func TestSender(t *testing.T) {
	got := make(chan int, 10)
	a := newActor(t, "sender", func(_ context.Context, task Task[int]) error {
		got <- task.Payload
		return nil
	}, Config[int]{Workers: 1})
	var viaFunc []int
	for _, tt := range []struct {
		name string
		s    Sender[int]
	}{
		{"actor", a.Sender()},
		{"func", SenderFunc[int](func(_ context.Context, p int) error { viaFunc = append(viaFunc, p); return nil })},
	} {
		for i := range 3 {
			if err := tt.s.Send(context.Background(), i); err != nil {
				t.Fatalf("%s: Send(%d) = %v", tt.name, i, err)
			}
		}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(got)
	var viaActor []int
	for p := range got {
		viaActor = append(viaActor, p)
	}
	if want := []int{0, 1, 2}; !slices.Equal(viaActor, want) || !slices.Equal(viaFunc, want) {
		t.Errorf("the actor ran %v and the func got %v, want %v each", viaActor, viaFunc, want)
	}
	if err := a.Sender().Send(context.Background(), 3); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close through the Sender = %v, want ErrClosed", err)
	}
}
