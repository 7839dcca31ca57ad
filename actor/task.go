package actor

import (
	"context"
	"time"
)

// A Handler does the work of one task. It should return when ctx ends: ctx is
// cancelled when the attempt's Config.Timeout passes and when the actor gives
// up draining at Close or Stop. An error fails this attempt; wrap it with
// [Permanent] when another attempt cannot succeed.
type Handler[T any] func(ctx context.Context, task Task[T]) error

// A Task is one unit of work as a handler sees it: the payload a producer sent
// and the identity the actor gave it.
type Task[T any] struct {
	// ID is unique within the actor and increases in the order tasks were
	// submitted. A replayed task gets a new ID.
	ID uint64 `json:"id"`
	// Type names the kind of work, for logs, errors and dead letters: the
	// name given with WithType, or else the Go type of the payload.
	Type string `json:"type"`
	// Attempt is 1 on the first run and one more on each retry.
	Attempt int `json:"attempt"`
	// Enqueued is when the task entered the mailbox. It is read from a
	// clock that the actor refreshes every millisecond while tasks arrive,
	// since reading the system clock for every task would cost more than
	// the rest of a send: it may be up to about a millisecond early (more on
	// a machine too busy to run the refresh on time), never late. A task
	// sent after a pause of two milliseconds or more is stamped exactly.
	Enqueued time.Time `json:"enqueued"`
	// Payload is what the producer sent.
	Payload T `json:"payload"`
}

// An envelope is a task on its way through the actor. Envelopes are copied
// in and out of the mailbox while the actor's lock is held, and an unbounded
// mailbox holds as many as are queued, so an envelope is small: its time is
// a reading of the actor's clock, and what few tasks carry is in extras.
// Actor.task makes the Task a handler sees.
type envelope[T any] struct {
	id      uint64
	enq     time.Duration // when the task entered the mailbox, as a reading of the actor's clock
	payload T
	x       *extras // nil for a task of the actor's default type, sent without Ask, that has not failed
}

// attempt returns the task's Task.Attempt.
func (e *envelope[T]) attempt() int {
	if e.x == nil || e.x.attempt == 0 {
		return 1
	}
	return e.x.attempt
}

// lastErr returns the error of the task's last failed attempt, if any.
func (e *envelope[T]) lastErr() error {
	if e.x == nil {
		return nil
	}
	return e.x.err
}

// reply returns where Ask waits for the task's outcome, or nil.
func (e *envelope[T]) reply() chan error {
	if e.x == nil {
		return nil
	}
	return e.x.reply
}

// task returns the Task that env carries.
func (a *Actor[T]) task(env *envelope[T]) Task[T] {
	return Task[T]{ID: env.id, Type: a.typeOf(env), Attempt: env.attempt(), Enqueued: a.clock.at(env.enq), Payload: env.payload}
}

// typeOf returns the type of env's task.
func (a *Actor[T]) typeOf(env *envelope[T]) string {
	if env.x == nil || env.x.typ == "" {
		return a.typ
	}
	return env.x.typ
}

// A SendOption sets a property of the task being sent. It is a value, not a
// function, so that passing options to Send does not allocate.
type SendOption struct {
	typ string
}

// WithType names the kind of work a task is, such as "createUserDevice"; the
// name appears in logs, errors and dead letters. Without it a task's type is
// the Go type of its payload. An actor keeps the first 256 names it is sent,
// so that a send with one of them does not allocate; a send with a name
// beyond those allocates.
func WithType(name string) SendOption { return SendOption{typ: name} }
