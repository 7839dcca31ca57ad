package pgactor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgpool"
)

// An Actor runs a handler over tasks stored in PostgreSQL, on workers in
// this process, alongside any number of other processes running the same
// actor on the same tables. It is safe for concurrent use. Create one with
// New and end it with Close.
type Actor[T any] struct {
	name    string
	handler actor.Handler[T] // nil for a send-only actor
	set     settings
	pool    *pgpool.Pool
	codec   Codec[T]
	typ     string // default task type: the payload's Go type
	onError func(*actor.TaskError)
	log     *slog.Logger
	store   *store // runs every statement
	tracer  Tracer // nil without Config.Tracer

	notifier notifier
	unlisten func() // ends the subscription to the schema's listener; nil without one

	shut     shutdown       // the actor's phase: running until Close
	wake     chan struct{}  // a task may be due: a notification, a local send, a retry due
	free     chan struct{}  // a worker became idle
	tasks    chan *lease    // the pump's tasks for idle workers; closed when it fetches no more
	settling chan *settling // completions and give-backs for the pump
	pumpDone chan struct{}  // closed as the pump returns

	schedWake chan struct{} // a schedule was stored here: the scheduler looks again

	workerWG sync.WaitGroup // workers
	bgWG     sync.WaitGroup // pump, maintenance

	mu         sync.Mutex // guards what follows
	workers    int        // worker goroutines, counting those the pump is starting
	idle       int        // workers waiting for a task that the pump has not reserved
	pending    int        // places for new workers held by the rounds in flight
	busy       int        // workers with a task
	nextWorker int
	leases     map[int64]*lease // the leases this instance holds, by task id
	wakeAt     time.Time        // the earliest retry this instance scheduled, for the pump
}

// New returns the durable actor named name on pool, with its workers
// started, after checking that the schema has been migrated. Every process
// that runs an actor of this name in this schema shares its queue. A nil
// handler makes a send-only actor, for processes that send tasks, read
// stats and manage dead letters but run none; its Config must not ask for
// workers.
//
// An actor holds one connection of its own, outside the pool, on which it
// LISTENs for new tasks (shared by the actors of one pool and schema in a
// process), unless Config.DisableListen is set; its other statements take
// connections from the pool.
func New[T any](ctx context.Context, pool *pgpool.Pool, name string, handler actor.Handler[T], cfg Config[T]) (*Actor[T], error) {
	switch {
	case name == "":
		return nil, errors.New("pgactor.New: the name is empty")
	case len(name) > maxName || !storableText(name):
		return nil, fmt.Errorf("pgactor.New(%q): the name must be valid UTF-8, without NUL, of at most %d bytes", name, maxName)
	case pool == nil:
		return nil, fmt.Errorf("pgactor.New(%q): the pool is nil", name)
	}
	errs := []error{cfg.Validate()}
	if handler == nil && (cfg.Workers != 0 || cfg.MinWorkers != 0 || cfg.MaxWorkers != 0) {
		errs = append(errs, &actor.ConfigError{Field: "Workers", Value: cfg.Workers, Rule: "a send-only actor (nil handler) runs no workers: leave Workers, MinWorkers and MaxWorkers 0"})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("pgactor.New(%q): invalid config: %w", name, err)
	}
	set := cfg.settings()
	if err := checkVersion(ctx, pool, set.schema); err != nil {
		return nil, fmt.Errorf("pgactor.New(%q): %w", name, err)
	}
	st := &store{pool: pool, schema: set.schema, actor: name, owner: ownerName(), channel: channelName(set.schema)}
	if err := st.register(ctx); err != nil {
		return nil, fmt.Errorf("pgactor.New(%q): register the actor: %w", name, err)
	}
	a := &Actor[T]{
		name:     name,
		handler:  handler,
		set:      set,
		pool:     pool,
		codec:    cfg.Codec,
		typ:      reflect.TypeFor[T]().String(),
		onError:  cfg.OnError,
		log:      cfg.Logger,
		store:    st,
		tracer:   cfg.Tracer,
		wake:     make(chan struct{}, 1),
		free:     make(chan struct{}, 1),
		tasks:    make(chan *lease),
		settling: make(chan *settling, set.max+1),
		pumpDone: make(chan struct{}),
		leases:   make(map[int64]*lease),
	}
	a.schedWake = make(chan struct{}, 1)
	a.shut.init()
	if a.codec == nil {
		a.codec = JSON[T]{}
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.onError == nil {
		a.onError = a.logFailure
	}
	a.notifier = notifier{store: st, log: a.log, window: notifyWindow}
	if handler != nil {
		if set.listen {
			a.unlisten = subscribe(pool, st.channel, name, a.wake, a.log)
		}
		a.mu.Lock()
		for range set.min {
			a.spawnLocked(nil)
			a.idle++
		}
		a.mu.Unlock()
		a.bgWG.Add(1)
		go a.runPump()
	}
	a.bgWG.Add(2)
	go a.maintainLoop()
	go a.scheduleLoop()
	return a, nil
}

// maxName bounds an actor's name, which travels as a notification's
// payload.
const maxName = 200

// storableText reports whether s can be stored in a text column:
// PostgreSQL refuses invalid UTF-8 and the NUL character.
func storableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// ownerName returns a name for this instance that says where it runs and
// is unique: host, process id, and random bits.
func ownerName() string {
	host, _ := os.Hostname()
	var b [6]byte
	rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// channelName returns the notification channel of a schema's actors; a
// notification's payload names the actor.
func channelName(schema string) string {
	h := fnv.New64a()
	h.Write([]byte(schema))
	return "pgactor_" + strconv.FormatUint(h.Sum64(), 16)
}

// Name returns the actor's name.
func (a *Actor[T]) Name() string { return a.name }

// Schema returns the schema of the actor's tables.
func (a *Actor[T]) Schema() string { return a.set.schema }

// poke wakes the pump.
func (a *Actor[T]) poke() { nudge(a.wake) }

// nudge sends on ch, a channel of capacity one, unless a signal is
// pending there already.
func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// logFailure is the default error handler.
func (a *Actor[T]) logFailure(err *actor.TaskError) {
	level, msg := slog.LevelWarn, "pgactor: task failed; will retry"
	if err.Final {
		level, msg = slog.LevelError, "pgactor: task failed"
	}
	a.log.LogAttrs(context.Background(), level, msg, err.Attrs()...)
}
