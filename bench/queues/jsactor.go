package queues

import (
	"context"
	"fmt"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsactorName is the actor's name on the queue's servers, which hold no
// other actor.
const jsactorName = "bench"

// jsactorQueue is jsactor on NATS servers embedded in this process, started
// afresh for each queue, or, in the recovery cell's child, on its parent's
// servers.
type jsactorQueue struct {
	k      Kind
	o      Options
	urls   string     // the servers' client URLs, comma-separated
	stop   func()     // shuts the servers down; nil in a child
	nc     *nats.Conn // the sender's connection
	js     jetstream.JetStream
	stream jetstream.Stream // the work stream, for Drained
	sender *jsactor.Actor[int64]
}

// openJetStream starts the servers k asks for, unless o.Attach, which
// connects to o.NATS instead, and opens a send-only actor on them.
func openJetStream(ctx context.Context, k Kind, o Options) (*jsactorQueue, error) {
	q := &jsactorQueue{k: k, o: o, urls: o.NATS}
	if o.Attach && o.NATS == "" {
		return nil, fmt.Errorf("queues: %s: attaching to no servers: Options.NATS is empty", k.Name)
	}
	if !o.Attach {
		so := jsserver.Options{SyncAlways: k.SyncAlways}
		if k.Nodes > 1 {
			c, err := jsserver.StartCluster(k.Nodes, so)
			if err != nil {
				return nil, fmt.Errorf("queues: %s: %w", k.Name, err)
			}
			q.urls, q.stop = c.ClientURLs(), c.Shutdown
		} else {
			s, err := jsserver.Start(so)
			if err != nil {
				return nil, fmt.Errorf("queues: %s: %w", k.Name, err)
			}
			q.urls, q.stop = s.ClientURL(), s.Shutdown
		}
	}
	if err := q.open(ctx); err != nil {
		q.shutdown()
		return nil, fmt.Errorf("queues: %s: %w", k.Name, err)
	}
	return q, nil
}

func (q *jsactorQueue) open(ctx context.Context) error {
	nc, err := q.connect()
	if err != nil {
		return err
	}
	// The sender creates the streams, R3 on a cluster, as a deployment's
	// first process would; Start's actors find them.
	s, err := jsactor.New(ctx, nc, jsactorName, nil, q.config(0))
	if err != nil {
		nc.Close()
		return err
	}
	q.js, err = jetstream.New(nc)
	if err == nil {
		work, _, _ := s.Streams()
		q.stream, err = q.js.Stream(ctx, work)
	}
	if err != nil {
		_ = s.Close(ctx)
		nc.Close()
		return err
	}
	q.nc, q.sender = nc, s
	return nil
}

// connect opens a connection of its own to the queue's servers: the sender
// and every Start have one each, as pgactor's and River's get connections
// of their pools, so that a send reaches the workers through the server.
func (q *jsactorQueue) connect() (*nats.Conn, error) {
	return nats.Connect(q.urls, nats.Name("actorpool-bench-queues"), nats.MaxReconnects(-1))
}

func (q *jsactorQueue) config(workers int) jsactor.Config[int64] {
	replicas := 1
	if q.k.Nodes > 1 {
		replicas = 3
	}
	return jsactor.Config[int64]{
		Workers:  workers,
		Lease:    q.o.Rescue,
		Replicas: replicas,
		Logger:   quiet(),
	}
}

func (q *jsactorQueue) Start(ctx context.Context, workers int, run func(int64)) (func(context.Context) error, error) {
	nc, err := q.connect()
	if err != nil {
		return nil, fmt.Errorf("queues: %s: %w", q.k.Name, err)
	}
	a, err := jsactor.New(ctx, nc, jsactorName, func(ctx context.Context, t actor.Task[int64]) error {
		run(t.Payload)
		return nil
	}, q.config(workers))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("queues: %s: %w", q.k.Name, err)
	}
	return func(ctx context.Context) error {
		err := a.Close(ctx)
		nc.Close()
		return err
	}, nil
}

func (q *jsactorQueue) InsertBatch(ctx context.Context, payloads []int64) error {
	if _, err := q.sender.SendBatch(ctx, payloads); err != nil {
		return fmt.Errorf("queues: %s: %w", q.k.Name, err)
	}
	return nil
}

func (q *jsactorQueue) Send(ctx context.Context, payload int64) error {
	_, err := q.sender.Send(ctx, payload)
	return err
}

// Drained reads the work stream's message count. The stream keeps a
// message only until the consumer whose subjects it is on acknowledges
// it (work-queue retention), and the run, delayed and backoff consumers
// split the stream's subjects between them, so the count is the sum of
// Stats's Queued, Running, Scheduled and Retrying, read at one instant
// from the stream's leader rather than consumer by consumer. A
// completion removes its task there only once the server has applied its
// acknowledgement (on a cluster, once the consumer's replicas have
// committed it), after the worker's DoubleAck was answered: no cell ends
// before its last completion holds.
func (q *jsactorQueue) Drained(ctx context.Context) (bool, error) {
	info, err := q.stream.Info(ctx)
	if err != nil {
		return false, err
	}
	return info.State.Msgs == 0, nil
}

// TableBytes sums State.Bytes of the actor's work, dead-letter and counter
// streams: the bytes of the messages they hold, as the server accounts
// them, which is JetStream's counterpart of the tables' size. It does not
// count the store's index files, nor the blocks of removed messages not
// yet compacted.
func (q *jsactorQueue) TableBytes(ctx context.Context) (int64, error) {
	work, dead, counts := q.sender.Streams()
	var n int64
	for _, name := range []string{work, dead, counts} {
		s, err := q.js.Stream(ctx, name)
		if err != nil {
			return 0, fmt.Errorf("queues: %s: stream %s: %w", q.k.Name, name, err)
		}
		n += int64(s.CachedInfo().State.Bytes)
	}
	return n, nil
}

func (q *jsactorQueue) ChildOptions() Options {
	o := q.o
	o.Attach = true
	o.NATS = q.urls
	return o
}

// Close closes the sender and its connection, and shuts the servers down
// unless this is a child, whose servers are its parent's.
func (q *jsactorQueue) Close(ctx context.Context) error {
	err := q.sender.Close(ctx)
	q.nc.Close()
	q.shutdown()
	return err
}

func (q *jsactorQueue) shutdown() {
	if q.stop != nil {
		q.stop()
	}
}
