package pgactor

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrNoSchema is wrapped by the error New, Stats and the other readers
// return when the schema has not been created, or is older than this
// library needs: run Migrate, or `actorpool migrate`.
var ErrNoSchema = errors.New("pgactor: schema not migrated")

// ErrUnknownActor is wrapped by the error of ReadStats, and of [Admin]
// methods and schedules, for an actor name that no New has ever
// registered in the schema.
var ErrUnknownActor = errors.New("pgactor: unknown actor")

// ErrNoTask is wrapped by the error of [Admin.Task] and [Actor.Task] when
// no live task and no dead letter has the ID.
var ErrNoTask = errors.New("pgactor: no such task")

// ErrBadFilter is wrapped by the error of a [TaskFilter] refused: a Limit
// out of range, an unknown state, Since not before Until, or an After
// above the largest ID (math.MaxInt64).
var ErrBadFilter = errors.New("pgactor: bad task filter")

// ErrDuplicate matches, with errors.Is, the [*DuplicateError] of a send
// refused because a live task of the actor has the same unique key.
var ErrDuplicate = errors.New("pgactor: a live task has the same unique key")

// ErrLeaseLost is the cause of a handler's context when the worker lost the
// task's lease — its heartbeats stopped reaching the database for longer
// than Config.Lease, so another worker may now run the task. The handler's
// result is refused.
var ErrLeaseLost = errors.New("pgactor: the task's lease was lost")

// ErrCanceled is the cause of a handler's context when [Actor.Cancel]
// canceled its task.
var ErrCanceled = errors.New("pgactor: task canceled")

// ErrNotInTask is returned by [Tx] when its context is not one a durable
// actor gave a handler.
var ErrNotInTask = errors.New("pgactor: the context is not a task's")

// ErrTaskTx is returned by Commit and Rollback on the transaction [Tx]
// returns: the task's transaction is committed with its completion, or
// rolled back when the handler fails, by the actor.
var ErrTaskTx = errors.New("pgactor: the task's transaction is committed or rolled back by the actor")

// A DuplicateError is the error of a send refused because a live task
// (queued, scheduled, running or waiting for a retry) has the same unique
// key, or, with UniqueFor, because a task with the same key was sent in
// the same period. It matches [ErrDuplicate].
type DuplicateError struct {
	Actor string
	Key   string
	// ID is the live task's ID, or 0 if it ended between the refusal and the
	// look-up; with UniqueFor, the ID of the period's task, which may have
	// ended.
	ID uint64
	// Period is UniqueFor's period; 0 for UniqueKey.
	Period time.Duration
}

// Error names the actor, the key and the task that holds it.
func (e *DuplicateError) Error() string {
	s := "pgactor: send to " + strconv.Quote(e.Actor) + ": unique key " + strconv.Quote(e.Key) + " is taken by a live task"
	if e.Period > 0 {
		s = "pgactor: send to " + strconv.Quote(e.Actor) + ": unique key " + strconv.Quote(e.Key) + " was taken in this period of " + e.Period.String() + " by a task"
	}
	if e.ID != 0 {
		s += " (ID " + strconv.FormatUint(e.ID, 10) + ")"
	}
	return s
}

// Is reports whether target is ErrDuplicate.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// An EncodeError is the error of a send whose payload the codec could not
// encode.
type EncodeError struct {
	Actor string
	Type  string // the payload's Go type
	Err   error
}

// Error names the actor and the payload's type, then the codec's error.
func (e *EncodeError) Error() string {
	return fmt.Sprintf("pgactor: send to %q: cannot encode payload of type %s: %v", e.Actor, e.Type, e.Err)
}

// Unwrap returns the codec's error.
func (e *EncodeError) Unwrap() error { return e.Err }

// A DecodeError is the error of a task whose stored payload the codec no
// longer decodes — its type changed between the deploy that sent it and
// the one that runs it. The task goes to the dead letters with
// ReasonUndecodable; the handler never sees it.
type DecodeError struct {
	Actor string
	ID    uint64
	Type  string // the task's type name
	Err   error
}

// Error names the actor and the task, then the codec's error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("pgactor: actor %q: task %d (%s): cannot decode payload: %v", e.Actor, e.ID, e.Type, e.Err)
}

// Unwrap returns the codec's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// A storedError is the error of a task's last attempt read back from the
// database, where only its message is kept.
type storedError string

func (e storedError) Error() string { return string(e) }
