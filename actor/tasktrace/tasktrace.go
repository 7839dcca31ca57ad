// Package tasktrace is the tracing hook shared by the durable actors,
// packages pgactor and jsactor: a [Tracer] follows each task from its send
// to each of its attempts, in whichever process runs them, through
// headers that the task carries. It imports the standard library only, so
// that a Tracer is written once — package oteltask implements it with
// OpenTelemetry — and a backend adopts it without importing any tracing
// library.
//
// jsactor.Config.Tracer is a Tracer. pgactor.Tracer is a TracerOf its
// own AttemptResult, whose Reason is a pgactor.Reason.
package tasktrace

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// A Tracer is the hook of a backend whose attempt results carry their
// reason as a fmt.Stringer, such as jsactor's: see TracerOf.
type Tracer = TracerOf[AttemptResult]

// A TracerOf follows a durable actor's tasks from their send to each of
// their attempts, R being what the backend tells of an attempt's end: an
// AttemptResultOf its dead-letter reason. The sender's tracer returns
// headers — a trace context, baggage — that the send stores with each
// task; the worker's tracer receives them back when an attempt starts, in
// another process as well as this one. Headers move with the task through every copy and state a
// backend keeps it in: retries, the dead letters, and back on replay, so
// that a replayed task's attempts continue the trace of its send.
//
// Its methods are called by many goroutines at once. A backend recovers
// their panics, and those of the functions they return, as it does a
// handler's: a panic of StartSend fails the send, which stores nothing;
// one of StartAttempt fails the attempt, the handler not run, so that the
// task is retried or dead-lettered with it; one of an end function is
// logged, and the send's result or the attempt's outcome stands.
type TracerOf[R any] interface {
	// StartSend is called as a send begins, once its options are checked.
	// It returns the context the send runs with, the headers to store
	// with each of its tasks (nil for none), and a function that the send
	// calls once, with the IDs stored, in the order of the payloads, and
	// the send's error. Each backend reserves some header names for itself
	// and drops them (pgactor: "pgactor-…"; jsactor: "Actorpool-…" and
	// "Nats-…").
	StartSend(ctx context.Context, info SendInfo) (context.Context, map[string]string, func(ids []uint64, err error))
	// StartAttempt is called when a worker takes up a task, before its
	// payload is decoded, with headers as StartSend returned them (nil
	// when it returned none, or the task was sent without a Tracer); never
	// the backend's own. The context it returns, derived from ctx, is the
	// handler's. The actor calls end once, when the attempt's outcome is
	// recorded, or given up.
	StartAttempt(ctx context.Context, info AttemptInfo, headers map[string]string) (_ context.Context, end func(R))
}

// SendInfo describes a send to a Tracer.
type SendInfo struct {
	Actor string
	Type  string // the tasks' type: WithType's, or the payload's Go type
	// Count is how many tasks the send stores: 1 for Send, len(payloads)
	// for a batch.
	Count int
	Batch bool // a batch send: SendBatch, or pgactor's SendBatchTx
	// RunAt is the time RunAt set, and After the delay After set; both
	// zero for a task due at once.
	RunAt time.Time
	After time.Duration
}

// AttemptInfo describes an attempt to a Tracer.
type AttemptInfo struct {
	Actor  string
	Worker string // the worker running the attempt, "actor/n"
	ID     uint64
	Type   string
	// Attempt counts the task's runs, this one included; a lost run
	// counts, a run given back or snoozed does not. It starts again at 1
	// after a replay.
	Attempt int
	// Lost is how many of the task's runs lost their worker.
	Lost int
	// Enqueued is when the task was sent, or replayed, by the clock of
	// the server that stored it (the database's, or the NATS server's).
	Enqueued time.Time
	// Due is when the task became due for this attempt, by the same
	// clock: for the first, when it was sent, or when its RunAt or After
	// came; after a failed run, when its Backoff ended; after a run given
	// back or snoozed, when it was given back or its snooze ended; after a
	// lost run, when the lost run's lease ran out. Its time in queue is
	// the attempt's start less Due. It is zero where the backend cannot
	// tell: jsactor does not know when a lost run's lease ran out.
	Due time.Time
}

// An Outcome is what became of an attempt.
type Outcome uint8

const (
	// OutcomeCompleted: the handler succeeded and its completion was
	// recorded.
	OutcomeCompleted Outcome = iota + 1
	// OutcomeRetried: the handler failed and the task is due again after
	// its Backoff.
	OutcomeRetried
	// OutcomeDeadLettered: the task went to the dead letters for
	// AttemptResult.Reason — attempts spent, a permanent error, lost too
	// often, undecodable — other than a cancel.
	OutcomeDeadLettered
	// OutcomeCanceled: the task was canceled (pgactor's Actor.Cancel) and
	// went to the dead letters.
	OutcomeCanceled
	// OutcomeLost: the lease was lost, so the task runs again elsewhere,
	// or the outcome could not be recorded, so it runs again once its
	// lease runs out.
	OutcomeLost
	// OutcomeGivenBack: Close stopped waiting for the handler and gave the
	// task back, its attempt not charged.
	OutcomeGivenBack
	// OutcomeSnoozed: the handler returned the backend's Snooze; the task
	// is due again after the delay, its attempt not charged.
	// AttemptResult.Err is the backend's *SnoozeError.
	OutcomeSnoozed
)

var outcomeNames = [...]string{"", "completed", "retried", "dead_lettered", "canceled", "lost", "given_back", "snoozed"}

// String returns the outcome's name, such as "dead_lettered": the value
// package oteltask gives its outcome attribute.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// AttemptResult is what a Tracer's end function learns of an attempt: the
// reason is the backend's own type (a jsactor.Reason, which compares
// equal to jsactor.ReasonPermanent and the like), nil unless the task was
// dead-lettered.
type AttemptResult = AttemptResultOf[fmt.Stringer]

// AttemptResultOf is what a TracerOf's end function learns of an
// attempt, R being the backend's dead-letter reason.
type AttemptResultOf[R any] struct {
	Outcome Outcome
	// Reason is why the task was dead-lettered, for OutcomeDeadLettered
	// and OutcomeCanceled; R's zero value otherwise.
	Reason R
	// Err is the handler's error, or why the task did not run (such as a
	// *DecodeError); nil when the handler succeeded.
	Err error
}
