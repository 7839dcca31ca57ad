package actor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
)

// An Actor runs a handler over the tasks sent to it, on a set of worker
// goroutines, and accounts for every task it accepts. It is safe for
// concurrent use. Create one with New and end it with Close or Stop.
type Actor[T any] struct {
	name      string
	handler   Handler[T]
	set       settings
	typ       string // default task type: the payload's Go type
	sink      Sink[T]
	onError   func(*TaskError)
	log       *slog.Logger
	errClosed error  // ErrClosed and ErrMailboxFull with the actor's name, made once so
	errFull   error  // that refusing a send does not allocate
	clock     *clock // stamps tasks as they are queued
	types     typeCache

	// ctx is the parent of every task's context; it is cancelled when the
	// actor stops draining.
	ctx    context.Context
	cancel context.CancelCauseFunc

	senderPool sync.Pool // *sender[T], reused by blocked sends

	// Shutdown: a channel per phase that announces it (see phase.go),
	// closed once the actor is in it. letters counts dead letters being
	// put, which Close waits for so that a sink can be closed after it.
	drained  chan struct{} // phaseDrained
	halted   chan struct{} // phaseHalted
	closed   chan struct{} // phaseClosed: closeErr is set
	closeErr error
	letters  sync.WaitGroup

	mu         sync.Mutex // guards everything below
	box        mailbox[T]
	ready      chunks[envelope[T]]    // retries whose backoff has passed; served before box
	retries    map[*retry[T]]struct{} // retries waiting for their backoff
	senders    senderList[T]          // sends waiting for room, first come first served
	idle       []*worker[T]           // parked workers; the last parked is woken first
	hands      []*worker[T]           // workers holding a hand (see hand.go)
	workers    map[*worker[T]]struct{}
	inState    [workerStates]int // workers in each state (see workerstate.go)
	nextID     uint64
	nextWorker int
	c          counters
	phase      phase // where the shutdown is (see phase.go)
	haltReason Reason
	haltCause  error
	lost       DrainError // what halting cost, for closeErr

	moves      [workerStates][workerStates]uint32 // worker moves made, by state from and to: for tests
	phaseMoves [phases][phases]uint32             // phase moves made, by phase from and to: for tests
}

type counters struct {
	submitted, rejected, dropped, completed, failed, panicked, retried, deadLettered uint64
}

// New returns an actor named name that runs handler on each task sent to it,
// with its workers started. The name appears in logs, errors, dead letters,
// worker names and profiler labels; it should be unique in the process.
func New[T any](name string, handler Handler[T], cfg Config[T]) (*Actor[T], error) {
	if name == "" {
		return nil, errors.New("actor.New: the name is empty")
	}
	if handler == nil {
		return nil, fmt.Errorf("actor.New(%q): the handler is nil", name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("actor.New(%q): invalid config: %w", name, err)
	}
	a := &Actor[T]{
		name:    name,
		handler: handler,
		set:     cfg.settings(),
		typ:     reflect.TypeFor[T]().String(),
		sink:    cfg.DeadLetters,
		onError: cfg.OnError,
		log:     cfg.Logger,
		drained: make(chan struct{}),
		halted:  make(chan struct{}),
		closed:  make(chan struct{}),
		retries: make(map[*retry[T]]struct{}),
		workers: make(map[*worker[T]]struct{}),
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.sink == nil {
		a.sink = NewLogSink[T](a.log, defaultLogEvery, defaultLogBurst)
	}
	if a.onError == nil {
		a.onError = a.logFailure
	}
	a.errClosed = fmt.Errorf("send to %q: %w", name, ErrClosed)
	a.errFull = fmt.Errorf("send to %q: %w (capacity %d, %s)", name, ErrMailboxFull, a.set.capacity, a.set.overflow)
	a.box = newMailbox[T](a.set.capacity)
	a.senderPool.New = func() any { return &sender[T]{done: make(chan struct{}, 1)} }
	a.ctx, a.cancel = context.WithCancelCause(context.Background())
	a.clock = newClock()

	a.mu.Lock()
	for range a.set.min {
		a.spawnLocked()
	}
	a.mu.Unlock()
	return a, nil
}

// Name returns the actor's name.
func (a *Actor[T]) Name() string { return a.name }
