package console

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Admin is what the console uses of a backend of durable actors. Its
// types are the console's own, so that one console serves actors on
// PostgreSQL (Postgres adapts a pgactor.Admin) and on NATS JetStream
// (package jsconsole adapts a jsactor.Admin) alike.
type Admin interface {
	// Backend describes the store of the actors and what it offers.
	Backend() Backend
	// Actors returns the actors, in order of name, with their stats.
	Actors(ctx context.Context) ([]ActorInfo, error)
	// Task returns the task key names; an error that IsNotFound reports
	// on when there is none.
	Task(ctx context.Context, key TaskKey) (TaskInfo, error)
	// Tasks returns the tasks f selects, a page at a time.
	Tasks(ctx context.Context, f TaskFilter) (TaskPage, error)
	// Replay sends the dead letter key names again, and returns the key
	// of the task it became; ok is false when key names no dead letter.
	Replay(ctx context.Context, key TaskKey) (replayed TaskKey, ok bool, err error)
	// Delete deletes the waiting task or the dead letter key names; ok is
	// false when key names neither (a running task is not deleted).
	Delete(ctx context.Context, key TaskKey) (ok bool, err error)
	// Pause stops the named actor's tasks from being taken until Resume.
	Pause(ctx context.Context, actor string) error
	// Resume lets the named actor's tasks be taken again.
	Resume(ctx context.Context, actor string) error
}

// Backend describes a backend of durable actors, for the pages.
type Backend struct {
	// Scope is what holds the actors, and Name its name: such as
	// "schema" and "jobs" on PostgreSQL, "prefix" and "actorpool" on
	// JetStream.
	Scope, Name string
	// Package is the Go package whose New creates its actors, such as
	// "pgactor".
	Package string
	// States are the states its tasks can be in, in the order the tasks
	// page offers them as filters.
	States []TaskState
	// Priorities and Owners are whether its tasks have a priority and a
	// process that owns them while they run, which the task page shows.
	Priorities, Owners bool
}

// A TaskState is where a task is.
type TaskState string

// The task states the pages know; a backend has some of them
// (Backend.States).
const (
	TaskQueued    TaskState = "queued"
	TaskScheduled TaskState = "scheduled"
	TaskRetrying  TaskState = "retrying"
	TaskRunning   TaskState = "running"
	TaskCanceling TaskState = "canceling"
	TaskDead      TaskState = "dead"
)

// ActorInfo is one actor, with its stats.
type ActorInfo struct {
	Name     string
	Paused   bool
	PausedAt time.Time // zero when the backend does not keep it
	Stats    Stats
}

// Stats are an actor's counters and gauges, over every process that runs
// it.
type Stats struct {
	Accepted, Completed, DeadLettered, Failed, Retried, Lost, Replayed uint64
	Queued, Scheduled, Retrying, Running, DeadLetters                  int
	OldestQueued                                                       time.Duration
}

// A TaskKey names one task of a backend, in a URL as its String. On a
// backend whose task IDs are unique across its actors (PostgreSQL), ID
// alone names a task, live or dead. On one whose tasks are per actor and
// whose dead letters are kept apart from its live tasks (JetStream), the
// key names the actor too, and whether ID is a live task's (its stream
// sequence) or a dead letter's.
type TaskKey struct {
	Actor string // "" where IDs are unique across actors
	Dead  bool   // ID is a dead letter's own; only with Actor
	ID    uint64
}

// String writes k as ParseTaskKey reads it: "42", "mail:42", or
// "mail:dead:42".
func (k TaskKey) String() string {
	id := strconv.FormatUint(k.ID, 10)
	switch {
	case k.Actor == "":
		return id
	case k.Dead:
		return k.Actor + ":dead:" + id
	}
	return k.Actor + ":" + id
}

// IsZero reports whether k is the zero key, which names no task.
func (k TaskKey) IsZero() bool { return k == TaskKey{} }

// ParseTaskKey reads a key written by TaskKey.String.
func ParseTaskKey(s string) (TaskKey, error) {
	var k TaskKey
	rest := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		k.Actor, rest = s[:i], s[i+1:]
		if a, ok := strings.CutSuffix(k.Actor, ":dead"); ok {
			k.Actor, k.Dead = a, true
		}
		if k.Actor == "" || strings.Contains(k.Actor, ":") {
			return TaskKey{}, fmt.Errorf("task %q is not a task key: write an id (42), or an actor and an id (mail:42, mail:dead:42)", s)
		}
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || id == 0 {
		return TaskKey{}, fmt.Errorf("task %q is not a task key: its id %q must be a whole number 1 or more, as in 42, mail:42 or mail:dead:42", s, rest)
	}
	k.ID = id
	return k, nil
}

// TaskInfo is one task as the pages show it.
type TaskInfo struct {
	Ref       TaskKey // what names it to the Admin, in the console's URLs
	ID        uint64  // its ID as the backend shows it
	Actor     string
	State     TaskState
	Reason    string // dead letters: why
	Type      string
	Priority  int
	Key       string // unique key, "" if none
	Enqueued  time.Time
	RunAt     time.Time // when it is due while it waits, or its lease runs out while it runs
	Started   time.Time // its last attempt's start; zero if never run or unknown
	Attempt   int
	Runs      int
	Lost      int
	Owner     string
	LastError string
	DeadAt    time.Time // dead letters: when
	Payload   []byte
}

// TaskFilter selects tasks; its zero value selects the first page of
// every actor's tasks, live and dead.
type TaskFilter struct {
	Actor  string      // only this actor's; "" for all
	States []TaskState // only tasks in one of these; none for every state
	Key    string      // only the tasks with this unique key; "" for all
	Since  time.Time   // only tasks enqueued at or after Since; zero for all
	Until  time.Time   // only tasks enqueued before Until; zero for all
	After  TaskKey     // only tasks listed after this one; zero from the first
	Limit  int         // at most this many, 1 or more
}

// TaskPage is one page of tasks; Next is the TaskFilter.After of the
// next page, zero on the last.
type TaskPage struct {
	Tasks []TaskInfo
	Next  TaskKey
}

// notFound marks an error of an Admin as naming an actor or a task that
// is not there.
type notFound struct{ err error }

func (e notFound) Error() string { return e.err.Error() }
func (e notFound) Unwrap() error { return e.err }

// NotFound returns err marked as naming an actor or task that is not
// there, which the console answers with 404 Not Found; an adapter marks
// its backend's errors so.
func NotFound(err error) error { return notFound{err} }

// IsNotFound reports whether err, or one it wraps, was marked by
// NotFound.
func IsNotFound(err error) bool {
	var nf notFound
	return errors.As(err, &nf)
}
