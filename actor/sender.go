package actor

import "context"

// A Sender sends tasks with payloads of type T. It is the shape this
// package's Actor and a durable one (package pgactor) share for sending:
// code that only sends — a request handler, a producer — written against
// a Sender runs unchanged whichever of them runs the tasks, and a test can
// hand it a SenderFunc. Both actors' Sender methods return one.
//
// Their Send methods themselves differ — options of their own types, and
// the durable actor's returns the task's ID too — which is why a Sender is
// asked of the actor rather than being the actor.
type Sender[T any] interface {
	// Send hands payload to the actor, and returns once the actor has
	// accepted the task: nil means it will complete or be dead-lettered.
	Send(ctx context.Context, payload T) error
}

// A SenderFunc is a function used as a Sender.
type SenderFunc[T any] func(ctx context.Context, payload T) error

// Send calls f.
func (f SenderFunc[T]) Send(ctx context.Context, payload T) error { return f(ctx, payload) }

// Sender returns the actor as a Sender: its Send, without options.
func (a *Actor[T]) Sender() Sender[T] {
	return SenderFunc[T](func(ctx context.Context, payload T) error { return a.Send(ctx, payload) })
}
