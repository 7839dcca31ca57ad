package jsactor

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

func TestPauseResume(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	ran := make(chan struct{}, 1)
	a, err := New(ctx, connect(t, srv.ClientURL()), "pause", func(ctx context.Context, task actor.Task[string]) error {
		ran <- struct{}{}
		return nil
	}, Config[string]{})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if err := a.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	// Checked by the consumer, not by time: the server holds the task while
	// the consumer is paused, so a fetch in flight gets nothing.
	s, err := ReadStats(ctx, connect(t, srv.ClientURL()), "", "pause")
	if err != nil || !s.Paused || s.Queued != 1 {
		t.Fatalf("stats while paused = %+v, %v; want Paused and one queued", s, err)
	}
	select {
	case <-ran:
		t.Fatal("a task ran while the actor was paused")
	case <-time.After(300 * time.Millisecond):
	}
	if err := a.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not run after Resume")
	}
	if s, err := a.Stats(ctx); err != nil || s.Paused {
		t.Errorf("stats after Resume = %+v, %v", s, err)
	}
}
