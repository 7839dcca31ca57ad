package pgactor

import (
	"context"

	"github.com/actorpool/actorpool/actor"
)

// Sender returns the actor as an actor.Sender, the shape it shares with
// the in-memory actor: its Send, without options, the task's ID dropped.
// Code written against an actor.Sender sends to either actor unchanged.
func (a *Actor[T]) Sender() actor.Sender[T] {
	return actor.SenderFunc[T](func(ctx context.Context, payload T) error {
		_, err := a.Send(ctx, payload)
		return err
	})
}
