package jsactor

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrUnknownActor is wrapped by the error of ReadStats and of the readers
// of an actor whose streams do not exist: no New has created them under
// that prefix.
var ErrUnknownActor = errors.New("jsactor: unknown actor")

// ErrBadStream is wrapped by the error of New when a stream or consumer
// of the actor's name exists with settings the actor cannot work with: a
// retention or subjects other than its own, a counter stream that does
// not count. The error names the stream, what it has and what it needs.
var ErrBadStream = errors.New("jsactor: stream not usable by the actor")

// ErrNoTask is wrapped by the error of Replay and DeleteDeadLetters for an
// ID that no dead letter has.
var ErrNoTask = errors.New("jsactor: no such task")

// ErrMaybeRunning is wrapped by the error of Delete for queued tasks
// that a worker may have taken as Delete deleted them, and for scheduled
// or retrying ones that may have come due and been copied to the ready
// tasks: their messages are deleted, but their handlers may run, and a
// task that runs ends as its handler's result says.
var ErrMaybeRunning = errors.New("jsactor: a worker may have taken the task as it was deleted")

// ErrDuplicate matches, with errors.Is, the [*DuplicateError] of a send
// refused because a live task of the actor has the same unique key.
var ErrDuplicate = errors.New("jsactor: a live task has the same unique key")

// ErrPriority is the error of a send given the [Priority] option:
// JetStream delivers a stream's messages in the order it stored them, and
// has no per-message priority.
var ErrPriority = errors.New("jsactor: Priority is not supported on JetStream: tasks run in the order they were stored; send urgent work to an actor of its own")

// ErrLeaseLost is the cause of a handler's context when the worker can no
// longer prove that it holds the task's lease: its renewals stopped being
// confirmed by the server for longer than Config.Lease, or the process
// was frozen. Another worker may now run the task, and this run's result
// is dropped.
var ErrLeaseLost = errors.New("jsactor: the task's lease was lost")

// ErrClosed is the cause of a handler's context when Close stops waiting
// for it and cancels it. Sends do not need the actor's workers, and are
// stored after Close as before.
var ErrClosed = errors.New("jsactor: actor closed")

// A DuplicateError is the error of a send refused because a live task
// (queued, delayed, running or waiting for a retry) has the same unique
// key. It matches [ErrDuplicate].
type DuplicateError struct {
	Actor string
	Key   string
}

// Error names the actor and the key.
func (e *DuplicateError) Error() string {
	return "jsactor: send to " + strconv.Quote(e.Actor) + ": a live task has the unique key " + strconv.Quote(e.Key)
}

// Is reports whether target is ErrDuplicate.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// An EncodeError is the error of a send whose payload the codec refused;
// nothing was stored.
type EncodeError struct {
	Actor string
	Err   error
}

// Error names the actor and the codec's error.
func (e *EncodeError) Error() string {
	return fmt.Sprintf("jsactor: send to %q: encode payload: %v", e.Actor, e.Err)
}

// Unwrap returns the codec's error.
func (e *EncodeError) Unwrap() error { return e.Err }

// A DecodeError is why a task was dead-lettered with ReasonUndecodable:
// its stored payload no longer decodes.
type DecodeError struct {
	Actor string
	ID    uint64
	Err   error
}

// Error names the actor, the task and the codec's error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("jsactor: actor %q: task %d: payload does not decode: %v", e.Actor, e.ID, e.Err)
}

// Unwrap returns the codec's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// storedError is an error read back from a message header: its message
// survives, its type does not.
type storedError string

func (e storedError) Error() string { return string(e) }
