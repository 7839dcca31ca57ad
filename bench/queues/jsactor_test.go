package queues

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestMain lets TestJetStreamRecovery re-run this binary as the worker
// process it kills.
func TestMain(m *testing.M) {
	MaybeChild()
	os.Exit(m.Run())
}

// TestJetStreamQueue runs a burn-down on each JetStream kind through the
// Queue interface, with a batch past the client's limit on publishes in
// flight (4,000), and
// checks what the cells rely on: Drained is false while a task waits and
// true once every completion holds, the streams' bytes count the tasks
// stored, the child's options name the servers, and Close shuts them down.
func TestJetStreamQueue(t *testing.T) {
	for _, k := range JetStreamKinds {
		t.Run(k.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			q, err := Open(ctx, k, Options{Schema: Schema(k)})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					_ = q.Close(ctx)
				}
			}()
			n := 4100
			if err := q.InsertBatch(ctx, make([]int64, n)); err != nil {
				t.Fatalf("InsertBatch of %d tasks: %v", n, err)
			}
			if done, err := q.Drained(ctx); err != nil || done {
				t.Fatalf("Drained with %d tasks waiting = %v, %v; want false", n, done, err)
			}
			// Each task's message holds at least its payload and the
			// headers a send sets.
			if b, err := q.TableBytes(ctx); err != nil || b < int64(n)*10 {
				t.Errorf("TableBytes with %d tasks stored = %d, %v; want at least %d", n, b, err, n*10)
			}
			if _, err := BurnDown(ctx, q, n, 50); err != nil {
				t.Fatalf("BurnDown: %v", err)
			}
			if done, err := q.Drained(ctx); err != nil || !done {
				t.Fatalf("Drained after the burn-down = %v, %v; want true", done, err)
			}

			co := q.ChildOptions()
			if !co.Attach || co.NATS == "" {
				t.Fatalf("ChildOptions = %+v; want Attach and the servers' URLs", co)
			}
			child, err := Open(ctx, k, co)
			if err != nil {
				t.Fatalf("attaching as the child does: %v", err)
			}
			if done, err := child.Drained(ctx); err != nil || !done {
				t.Errorf("the child's Drained = %v, %v; want true, as its parent's", done, err)
			}
			if err := child.Close(ctx); err != nil {
				t.Errorf("closing the child: %v", err)
			}
			if done, err := q.Drained(ctx); err != nil || !done {
				t.Fatalf("the parent's Drained after the child closed = %v, %v; want true: the child must leave the servers running", done, err)
			}

			closed = true
			if err := q.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if nc, err := nats.Connect(co.NATS, nats.Timeout(time.Second)); err == nil {
				nc.Close()
				t.Errorf("connected to %s after Close; want the queue's servers shut down", co.NATS)
			}
		})
	}
}

// TestJetStreamAttachWithoutServers checks that a child given no URLs
// says so rather than connecting to a default NATS.
func TestJetStreamAttachWithoutServers(t *testing.T) {
	_, err := Open(context.Background(), JetStream, Options{Attach: true})
	if err == nil {
		t.Fatal("Open with Attach and no NATS URLs succeeded; want an error")
	}
}

// TestJetStreamRecovery runs the recovery cell on a single node: the
// killed child's task runs again in this process after jsactor's lease.
func TestJetStreamRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease of 5 s to run out")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q, err := Open(ctx, JetStream, Options{Schema: Schema(JetStream)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	r, err := Recovery(ctx, q, JetStream, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The lease is 5 s; the task runs again when it runs out, at the
	// surviving workers' pull request already waiting on the server.
	if !r.Recovered || r.After < 4*time.Second || r.After > 20*time.Second {
		t.Errorf("Recovery = %+v; want the task recovered between 4 s and 20 s after the kill", r)
	}
}

// TestKindNamed checks that every kind, the JetStream ones included, is
// found by its name, as the recovery cell's child finds its own.
func TestKindNamed(t *testing.T) {
	for _, want := range append([]Kind{PGActor, River, RiverDefaults, JetStream, JetStreamSyncAlways, JetStreamR3}, PGActorRounds...) {
		got, err := KindNamed(want.Name)
		if err != nil || got != want {
			t.Errorf("KindNamed(%q) = %+v, %v; want %+v", want.Name, got, err, want)
		}
	}
	if _, err := KindNamed("jetstream-r5"); err == nil {
		t.Error(`KindNamed("jetstream-r5") succeeded; want an error`)
	}
}
