package pgactor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestNotifyWakes checks that a task sent by another instance — whose
// sends cannot wake this one's workers directly — is taken at once
// through LISTEN/NOTIFY, though the workers poll only once an hour:
// single sends, a burst within the notifier's window (whose last send
// relies on the trailing notification), a batch, and a send in a
// transaction.
func TestNotifyWakes(t *testing.T) {
	r := newRig(t)
	ran := make(chan int, 100)
	start(r, "woken", forward(ran), Config[int]{Workers: 2, PollInterval: time.Hour})
	sender := start(r, "woken", nil, Config[int]{})
	expect := func(n int) {
		t.Helper()
		for range n {
			within(t, ran, 10*time.Second, "a task sent elsewhere was not taken: no notification woke the workers")
		}
	}
	time.Sleep(100 * time.Millisecond) // the workers' first fetch has found nothing
	for i := range 3 {
		if _, err := sender.Send(t.Context(), i); err != nil {
			t.Fatal(err)
		}
		expect(1)
	}
	for i := range 10 {
		if _, err := sender.Send(t.Context(), i); err != nil {
			t.Fatal(err)
		}
	}
	expect(10)
	if _, err := sender.SendBatch(t.Context(), []int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	expect(3)
	tx, err := r.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sender.SendTx(t.Context(), tx, 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	expect(1)
}

// TestPolling checks that workers without a listener, as behind PgBouncer
// in transaction mode, find tasks sent elsewhere by polling.
func TestPolling(t *testing.T) {
	r := newRig(t)
	ran := make(chan int, 1)
	start(r, "polled", forward(ran), Config[int]{PollInterval: 50 * time.Millisecond, DisableListen: true})
	sender := start(r, "polled", nil, Config[int]{})
	if _, err := sender.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	within(t, ran, 10*time.Second, "polling never found the task")
}

// TestListenReconnects checks that the listener reconnects after its
// connection is cut, and workers are woken by notifications again.
func TestListenReconnects(t *testing.T) {
	r := newRig(t)
	p, proxy := r.poolThroughProxy()
	ran := make(chan int, 10)
	a, err := New(t.Context(), p, "reconnecting", forward(ran), Config[int]{Schema: r.schema, PollInterval: time.Hour, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	sender := start(r, "reconnecting", nil, Config[int]{})
	eventually(t, 10*time.Second, "listening", func() bool { return proxy.Conns() >= 2 })
	proxy.CutAll()
	time.Sleep(300 * time.Millisecond) // the listener reconnects after 100ms
	for i := range 3 {
		if _, err := sender.Send(t.Context(), i); err != nil {
			t.Fatal(err)
		}
		within(t, ran, 15*time.Second, fmt.Sprintf("task %d not taken after the listener's connection was cut", i))
	}
}

// TestElastic checks that an elastic actor starts workers for waiting
// tasks, up to MaxWorkers, and lets them go after KeepAlive.
func TestElastic(t *testing.T) {
	r := newRig(t)
	release := make(chan struct{})
	a := start(r, "elastic", func(ctx context.Context, task actor.Task[int]) error {
		<-release
		return nil
	}, Config[int]{MinWorkers: 0, MaxWorkers: 3, KeepAlive: 100 * time.Millisecond})
	if s := stats(t, a); s.Workers != 0 {
		t.Errorf("started with %d workers, want 0", s.Workers)
	}
	if _, err := a.SendBatch(t.Context(), make([]int, 5)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "three workers busy", func() bool {
		s := stats(t, a)
		return s.Workers == 3 && s.Busy == 3 && s.Running == 3 && s.Queued == 2
	})
	close(release)
	eventually(t, 10*time.Second, "all completed", func() bool { return stats(t, a).Completed == 5 })
	eventually(t, 10*time.Second, "workers let go", func() bool { return stats(t, a).Workers == 0 })
}

// TestTrailingNotify checks that a send that skipped its notification,
// because another went out within the notifier's window, is followed by
// one at the end of the window.
func TestTrailingNotify(t *testing.T) {
	r := newRig(t)
	ran := make(chan int, 10)
	start(r, "trailing", forward(ran), Config[int]{PollInterval: time.Hour})
	sender := start(r, "trailing", nil, Config[int]{})
	sender.notifier.window = 300 * time.Millisecond
	time.Sleep(100 * time.Millisecond) // the workers' first fetch has found nothing
	for i := range 2 {
		// The second send comes within the window of the first's
		// notification, after the workers went back to waiting.
		if _, err := sender.Send(t.Context(), i); err != nil {
			t.Fatal(err)
		}
		within(t, ran, 10*time.Second, fmt.Sprintf("send %d: no notification woke the workers", i))
	}
}
