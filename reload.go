package actorpool

import (
	"context"
	"fmt"
)

// reload is Reload: it asks the keeper to start a new generation and waits
// until the idle objects are retired.
func (p *core) reload(ctx context.Context) error {
	if p.closed.Load() {
		return ErrClosed
	}
	reply := make(chan struct{})
	if !p.post(message{kind: msgReload, reply: reply}) {
		return ErrClosed
	}
	select {
	case <-reply:
		return nil
	case <-p.done:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("actorpool: reload: %w", ctx.Err())
	}
}

// reload starts a new generation: every object alive is doomed, idle ones
// are retired now, the rest when they come back, and creates in flight
// when they return (see created).
func (k *keeper[T]) reload() {
	k.gen++
	for i := range k.p.slots {
		s := &k.p.slots[i]
		if s.load().kind() != kindFree {
			s.doomed.Store(uint32(causeReload) + 1)
		}
	}
	k.retireIdle(causeReload)
}
