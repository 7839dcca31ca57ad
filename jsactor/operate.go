package jsactor

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pauseFor is how long Pause pauses the run consumer: until Resume.
const pauseFor = 100 * 365 * 24 * time.Hour

// Pause stops every process from taking the actor's tasks, through the
// server's consumer pause: running tasks finish, sends are stored, and
// delayed tasks and retries still come due, to wait on the ready subject.
// It lasts until Resume, across restarts.
func (a *Actor[T]) Pause(ctx context.Context) error { return pause(ctx, a.js, a.l) }

// Resume lets the actor's tasks be taken again after Pause.
func (a *Actor[T]) Resume(ctx context.Context) error { return resume(ctx, a.js, a.l) }

// admin returns an Admin of the actor's prefix.
func (a *Actor[T]) admin() *Admin { return &Admin{js: a.js, prefix: a.set.prefix} }

// Tasks returns the actor's live tasks that f selects; see Admin.Tasks.
func (a *Actor[T]) Tasks(ctx context.Context, f TaskFilter) ([]TaskInfo, uint64, error) {
	return a.admin().Tasks(ctx, a.name, f)
}

// RunNow makes the actor's scheduled and retrying tasks with the given
// Seqs due now; see Admin.RunNow.
func (a *Actor[T]) RunNow(ctx context.Context, seqs ...uint64) ([]uint64, error) {
	return a.admin().RunNow(ctx, a.name, seqs...)
}

// Delete deletes the actor's waiting tasks with the given Seqs; see
// Admin.Delete.
func (a *Actor[T]) Delete(ctx context.Context, seqs ...uint64) ([]uint64, error) {
	return a.admin().Delete(ctx, a.name, seqs...)
}

func pause(ctx context.Context, js jetstream.JetStream, l layout) error {
	if _, err := js.PauseConsumer(ctx, l.workStream(), consumerRun, time.Now().Add(pauseFor)); err != nil {
		return unknown(l, fmt.Errorf("pause: %w", err))
	}
	return nil
}

func resume(ctx context.Context, js jetstream.JetStream, l layout) error {
	if _, err := js.ResumeConsumer(ctx, l.workStream(), consumerRun); err != nil {
		return unknown(l, fmt.Errorf("resume: %w", err))
	}
	return nil
}
