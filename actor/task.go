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
	// Enqueued is when the task entered the mailbox.
	Enqueued time.Time `json:"enqueued"`
	// Payload is what the producer sent.
	Payload T `json:"payload"`
}

// An envelope is a task on its way through the actor.
type envelope[T any] struct {
	task Task[T]
	// since is when the task entered the queue it is in: the mailbox, or the
	// queue of retries whose backoff has passed. It dates Stats.OldestQueued.
	since time.Time
	// err is the error of the task's last attempt, nil before the first.
	err error
	// reply is where Ask waits for the outcome; nil for the other sends.
	reply chan error
}

// A SendOption sets a property of the task being sent. It is a value, not a
// function, so that passing options to Send does not allocate.
type SendOption struct {
	typ string
}

// WithType names the kind of work a task is, such as "createUserDevice"; the
// name appears in logs, errors and dead letters. Without it a task's type is
// the Go type of its payload.
func WithType(name string) SendOption { return SendOption{typ: name} }
