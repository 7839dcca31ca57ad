package jsactor

import (
	"context"
	"fmt"
	"time"
)

// pauseFor is how long Pause pauses the run consumer: until Resume.
const pauseFor = 100 * 365 * 24 * time.Hour

// Pause stops every process from taking the actor's tasks, through the
// server's consumer pause: running tasks finish, sends are stored, and
// delayed tasks and retries still come due, to wait on the ready subject.
// It lasts until Resume, across restarts.
func (a *Actor[T]) Pause(ctx context.Context) error {
	if _, err := a.js.PauseConsumer(ctx, a.l.workStream(), consumerRun, time.Now().Add(pauseFor)); err != nil {
		return fmt.Errorf("jsactor: pause %q: %w", a.name, err)
	}
	return nil
}

// Resume lets the actor's tasks be taken again after Pause.
func (a *Actor[T]) Resume(ctx context.Context) error {
	if _, err := a.js.ResumeConsumer(ctx, a.l.workStream(), consumerRun); err != nil {
		return fmt.Errorf("jsactor: resume %q: %w", a.name, err)
	}
	return nil
}
