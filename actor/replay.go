package actor

import (
	"context"
	"fmt"
)

// Replay sends the letters of src to the actor again, in order, as new tasks
// with their payload and type, waiting for room as Send does. It returns how
// many it sent, and stops at the first letter it cannot read or send. Reading
// does not remove letters from src: clear it once the replay has succeeded.
func (a *Actor[T]) Replay(ctx context.Context, src Source[T]) (int, error) {
	n := 0
	for l, err := range src.Letters() {
		if err != nil {
			return n, fmt.Errorf("replay into %q: %w", a.name, err)
		}
		if err := a.Send(ctx, l.Task.Payload, WithType(l.Task.Type)); err != nil {
			return n, fmt.Errorf("replay into %q: letter of task %d (%s) from %q: %w", a.name, l.Task.ID, l.Task.Type, l.Actor, err)
		}
		n++
	}
	return n, nil
}
