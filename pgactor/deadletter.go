package pgactor

import (
	"context"
	"fmt"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/names"
)

// Reason is why a task went to the dead letters.
type Reason uint8

const (
	// ReasonMaxAttempts: the task failed Config.MaxAttempts times.
	ReasonMaxAttempts Reason = iota + 1
	// ReasonPermanent: the handler failed with an error marked
	// actor.Permanent.
	ReasonPermanent
	// ReasonCanceled: Actor.Cancel canceled the task.
	ReasonCanceled
	// ReasonLost: the task's workers were lost — killed, frozen or cut off
	// past the lease — more than Config.MaxLost times.
	ReasonLost
	// ReasonUndecodable: the stored payload no longer decodes (see Codec).
	ReasonUndecodable
)

// reasonNames are the reasons' names, in the order of their codes; they
// are also what the reason column holds.
var reasonNames = names.New[Reason]("pgactor", "dead-letter reason", "Reason",
	"max attempts", "permanent error", "canceled", "lost", "undecodable")

// String returns the reason's name, such as "max attempts".
func (r Reason) String() string { return reasonNames.String(r) }

// MarshalText encodes r as its name.
func (r Reason) MarshalText() ([]byte, error) { return reasonNames.Marshal(r) }

// UnmarshalText decodes a name written by MarshalText.
func (r *Reason) UnmarshalText(text []byte) (err error) {
	*r, err = reasonNames.Unmarshal(text)
	return err
}

// A DeadLetter is a task that will not run again unless replayed, with
// why.
type DeadLetter[T any] struct {
	Actor string
	// Task is the task as it last ran: Task.Attempt is its last attempt.
	// Task.Payload is the zero value when DecodeErr is set.
	Task   actor.Task[T]
	Reason Reason
	// Err is the error of the task's last failed attempt, as its message;
	// nil if no attempt failed.
	Err error
	// Attempts is how many times a handler ran for the task, lost runs
	// included; Lost how many of those runs lost their worker.
	Attempts  int
	Lost      int
	Priority  int16
	UniqueKey string
	// Started is when its last run began; zero if it never ran.
	Started time.Time
	// Time is when it was dead-lettered.
	Time time.Time
	// Raw is the stored payload, as the codec encoded it.
	Raw []byte
	// DecodeErr is the codec's error when Raw no longer decodes.
	DecodeErr error
}

// A LetterFilter selects dead letters; its zero value selects the first
// hundred.
type LetterFilter struct {
	Reason  Reason // only this reason; 0 for all
	Type    string // only this task type; "" for all
	AfterID uint64 // only IDs above this one, to read page after page
	Limit   int    // at most this many; 0 means 100
}

// DeadLetters returns the actor's dead letters that f selects, in the
// order of their IDs. To read them all, pass the last ID of each page as
// the next page's AfterID.
func (a *Actor[T]) DeadLetters(ctx context.Context, f LetterFilter) ([]DeadLetter[T], error) {
	stored, err := a.store.deadLetters(ctx, f)
	if err != nil {
		return nil, a.readErr("read dead letters", err)
	}
	var letters []DeadLetter[T]
	for _, sl := range stored {
		l := DeadLetter[T]{Actor: a.name, Raw: sl.payload, Priority: sl.priority, Attempts: sl.attempts, Lost: sl.lost}
		l.Task.ID, l.Task.Type, l.Task.Attempt, l.Task.Enqueued = uint64(sl.id), sl.typ, sl.attempts, sl.enqueued
		l.Reason.UnmarshalText([]byte(sl.reason))
		if sl.key != nil {
			l.UniqueKey = *sl.key
		}
		if sl.lastErr != nil {
			l.Err = storedError(*sl.lastErr)
		}
		if sl.started != nil {
			l.Started = *sl.started
		}
		if sl.dead != nil {
			l.Time = *sl.dead
		}
		if p, err := a.decode(l.Raw); err != nil {
			l.DecodeErr = &DecodeError{Actor: a.name, ID: l.Task.ID, Type: l.Task.Type, Err: err}
		} else {
			l.Task.Payload = p
		}
		letters = append(letters, l)
	}
	return letters, nil
}

// Replay moves the actor's dead letters with the given IDs back to the
// queue, due at once, with their attempts and lost runs reset, and returns
// the IDs it moved. It is atomic: all the letters it returns moved in one
// transaction, and a letter is moved once however many replays run at
// once. An ID that is not a dead letter of this actor (any more) is left
// out of the result, as is a letter whose unique key a live task holds, or
// another letter of the same replay, before it by ID, takes. A replayed
// task keeps its ID and counts again in Stats.Accepted.
func (a *Actor[T]) Replay(ctx context.Context, ids ...uint64) ([]uint64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	moved, err := a.store.replay(ctx, ids)
	if err != nil {
		return nil, a.readErr("replay", err)
	}
	if len(moved) > 0 && a.handler != nil {
		a.poke()
	}
	return moved, nil
}

// DeleteDeadLetters deletes the actor's dead letters with the given IDs and
// returns how many it deleted.
func (a *Actor[T]) DeleteDeadLetters(ctx context.Context, ids ...uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := a.store.deleteDeadLetters(ctx, ids)
	if err != nil {
		return 0, a.readErr("delete dead letters", err)
	}
	return n, nil
}

// Cancel cancels the actor's tasks with the given IDs and returns how many
// it canceled. A waiting task moves to the dead letters at once with
// ReasonCanceled. A running task is marked: its worker's next heartbeat
// cancels the handler's context with cause ErrCanceled; if the handler then
// fails, the task goes to the dead letters with ReasonCanceled, and if it
// succeeds it completes. A task that is neither — ended already, of
// another actor, or marked by an earlier Cancel — is not counted.
func (a *Actor[T]) Cancel(ctx context.Context, ids ...uint64) (int, error) {
	found, err := cancelTasks(ctx, a.store, ids)
	if err != nil {
		return found, a.readErr("cancel", err)
	}
	return found, nil
}

// readErr wraps an error of the named operation, turning a missing table
// into ErrNoSchema.
func (a *Actor[T]) readErr(what string, err error) error {
	if isUndefined(err) {
		return fmt.Errorf("pgactor: actor %q: %s: %w: %w", a.name, what, ErrNoSchema, err)
	}
	return fmt.Errorf("pgactor: actor %q: %s: %w", a.name, what, err)
}
