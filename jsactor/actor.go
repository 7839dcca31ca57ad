package jsactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// An Actor runs a handler over tasks stored in JetStream, on workers in
// this process, alongside any number of other processes running the same
// actor on the same streams. It is safe for concurrent use. Create one
// with New and end it with Close.
type Actor[T any] struct {
	name    string
	handler actor.Handler[T] // nil for a send-only actor
	set     settings
	l       layout
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream // the work stream
	run     jetstream.Consumer
	codec   Codec[T]
	typ     string // default task type: the payload's Go type
	onError func(*actor.TaskError)
	tracer  Tracer // nil without Config.Tracer
	log     *slog.Logger
	epoch   time.Time              // the zero of the monotonic readings leases are proven in
	faults  atomic.Pointer[faults] // a test's injected faults; nil outside tests

	counts   counters
	gaveBack atomic.Int64 // tasks given back since Close began
	flushed  atomic.Bool  // Close has begun its last flush of the counters

	runCtx  context.Context         // the handlers' parent: canceled when Close gives up on them
	stopRun context.CancelCauseFunc //
	stopCtx context.Context         // canceled when Close begins: no more fetches or timers
	stop    context.CancelFunc      //
	// beatCtx is canceled once Close has settled or given back the tasks
	// it waited for: their leases are renewed until then, through Grace.
	beatCtx  context.Context
	stopBeat context.CancelFunc

	tokens chan struct{} // one per idle worker
	queue  chan *held    // fetched tasks for the workers; closed after the fetcher returns

	timers []jetstream.ConsumeContext

	workerWG sync.WaitGroup // workers
	bgWG     sync.WaitGroup // fetcher, heartbeat, counter flusher

	mu         sync.Mutex // guards what follows
	held       map[*held]struct{}
	busy       int
	nextWorker int
	closed     bool
	closeErr   error
	closeDone  chan struct{}
}

// New returns the durable actor named name, with its workers started,
// after creating its streams and consumers on the server nc is connected
// to, or checking those that exist. Every process that runs an actor of
// this name and Prefix on the same NATS shares its queue. A nil handler
// makes a send-only actor, for processes that send tasks, read stats and
// manage dead letters but run none; its Config must not ask for workers.
//
// The actor does not own nc: close it after Close.
func New[T any](ctx context.Context, nc *nats.Conn, name string, handler actor.Handler[T], cfg Config[T]) (*Actor[T], error) {
	if nc == nil {
		return nil, errors.New("jsactor: New: the NATS connection is nil")
	}
	if !namePattern.MatchString(name) {
		return nil, fmt.Errorf("jsactor: New: actor name %q %s", name, nameRule)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if handler == nil && cfg.Workers > 0 {
		return nil, fmt.Errorf("jsactor: New %q: a send-only actor (nil handler) runs no workers, but Workers is %d", name, cfg.Workers)
	}
	if !nc.IsConnected() {
		return nil, fmt.Errorf("jsactor: New %q: not connected to NATS (status %v): start the server, or check the URL", name, nc.Status())
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jsactor: New %q: %w", name, err)
	}
	a := &Actor[T]{
		name: name, handler: handler, set: cfg.settings(), nc: nc, js: js, codec: cfg.Codec,
		onError: cfg.OnError, log: cfg.Logger, epoch: time.Now(), held: map[*held]struct{}{},
		closeDone: make(chan struct{}),
	}
	a.l = layout{prefix: a.set.prefix, actor: name}
	a.tracer = cfg.Tracer
	if a.codec == nil {
		a.codec = JSON[T]{}
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.log = a.log.With("actor", name)
	a.typ = reflect.TypeFor[T]().String()
	a.stream, err = provision(ctx, js, a.l, &a.set)
	if err != nil {
		return nil, wrapNoJetStream(name, err)
	}
	if a.run, err = a.stream.Consumer(ctx, consumerRun); err != nil {
		return nil, fmt.Errorf("jsactor: New %q: consumer %q: %w", name, consumerRun, err)
	}
	a.checkDedup(ctx)
	a.runCtx, a.stopRun = context.WithCancelCause(context.Background())
	a.stopCtx, a.stop = context.WithCancel(context.Background())
	a.beatCtx, a.stopBeat = context.WithCancel(context.Background())
	a.bgWG.Add(1)
	go a.flushCounters()
	if handler == nil {
		return a, nil
	}
	if err := a.startTimers(ctx); err != nil {
		a.stop()
		a.stopBeat()
		a.stopRun(ErrClosed)
		a.bgWG.Wait()
		return nil, err
	}
	a.tokens = make(chan struct{}, a.set.workers)
	a.queue = make(chan *held, a.set.workers)
	for range a.set.workers {
		a.tokens <- struct{}{}
		a.startWorker()
	}
	a.bgWG.Add(2)
	go a.fetch()
	go a.heartbeat()
	return a, nil
}

// wrapNoJetStream explains the error of a server without JetStream.
func wrapNoJetStream(name string, err error) error {
	// A server without JetStream has no one answering its API: no
	// responders, rather than an error that says so.
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
		errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("jsactor: New %q: the server has no JetStream for this account: start nats-server with -js (or use package jsserver): %w", name, err)
	}
	return err
}

// checkDedup warns when an existing stream's duplicate window — an
// operator's, since New keeps the settings of a stream that exists — is
// shorter than this actor's Lease needs: a task whose acknowledgement was
// lost after its copy or dead letter was stored may then end twice.
func (a *Actor[T]) checkDedup(ctx context.Context) {
	need := minDedup(a.set.lease)
	for _, name := range []string{a.l.workStream(), a.l.deadStream()} {
		st, err := a.js.Stream(ctx, name)
		if err != nil {
			continue // the streams were just made or checked; a read that fails now costs a warning, not New
		}
		if d := st.CachedInfo().Config.Duplicates; d < need {
			a.log.Warn("the stream's duplicate window is shorter than the actor needs: a task whose acknowledgement is lost after its retry or dead letter was stored may end twice",
				"stream", name, "duplicate_window", d, "needs", need)
		}
	}
}

// Name returns the actor's name.
func (a *Actor[T]) Name() string { return a.name }

// Prefix returns the prefix of the actor's streams and subjects: its
// Config.Prefix, or DefaultPrefix.
func (a *Actor[T]) Prefix() string { return a.set.prefix }

// Streams returns the names of the actor's work, dead-letter and counter
// streams.
func (a *Actor[T]) Streams() (work, dead, counts string) {
	return a.l.workStream(), a.l.deadStream(), a.l.countStream()
}

// Sender returns the actor as an actor.Sender: its Send, without options
// and without the ID.
func (a *Actor[T]) Sender() actor.Sender[T] {
	return actor.SenderFunc[T](func(ctx context.Context, payload T) error {
		_, err := a.Send(ctx, payload)
		return err
	})
}

// now reads the monotonic clock that leases are proven in.
func (a *Actor[T]) now() time.Duration { return time.Since(a.epoch) }

// report hands a failed attempt to OnError, or logs it, then runs then,
// which settles the task. then is deferred, so that the task is settled
// even when OnError ends the worker with runtime.Goexit (as t.FailNow
// does): left unsettled, it stayed held, its lease renewed, until Close.
// A panic of OnError fails nothing more: it is logged with the failure it
// was given, which a retried attempt has recorded nowhere else.
func (a *Actor[T]) report(err *actor.TaskError, then func()) {
	defer then()
	if a.onError == nil {
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "task failed", err.Attrs()...)
		return
	}
	defer func() {
		if v := recover(); v != nil {
			perr := &actor.PanicError{Func: "Config.OnError", Value: v, Stack: debug.Stack()}
			a.log.LogAttrs(context.Background(), slog.LevelError, "error handler panicked",
				append(err.Attrs(), slog.Any("error_handler", perr))...)
		}
	}()
	a.onError(err)
}
