package pgactor

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A Tracer follows a durable actor's tasks from their send to each of
// their attempts, in whichever process runs them: set it as
// Config.Tracer. Package otelpgactor implements it with OpenTelemetry;
// pgactor itself imports no tracing library.
//
// The sender's Tracer returns headers — a trace context, baggage — that
// the send stores with each task, in the tasks' headers column, and the
// worker's Tracer receives them back when an attempt starts, in another
// process as well as this one. Headers move with the task: into the dead
// letters when it is dead-lettered, and back to the queue when it is
// replayed, so that a replayed task's attempts continue the trace of its
// send. An actor without a Tracer stores no headers (the column is NULL,
// but for a scheduled task's own, see ScheduledFor) and costs nothing per
// send or attempt.
//
// Its methods are called by many goroutines at once.
type Tracer interface {
	// StartSend is called as a send — Send, SendTx, SendBatch,
	// SendBatchTx — begins, once its options are checked. It returns the
	// context the send runs its statement with, the headers to store with
	// each of its tasks (nil for none), and a function that the send calls
	// once, with the IDs stored, in the order of the payloads, and the
	// send's error. Header names beginning "pgactor-" are reserved for
	// pgactor: the send drops them.
	StartSend(ctx context.Context, info SendInfo) (context.Context, map[string]string, func(ids []uint64, err error))
	// StartAttempt is called when a worker takes up a task, before its
	// payload is decoded, with headers as StartSend returned them (nil
	// when it returned none, or the task was sent without a Tracer or by
	// a schedule); never pgactor's own, such as HeaderPeriod. The
	// context it returns, derived from ctx, is the handler's. The actor
	// calls end once, when the attempt's outcome is recorded, or given up.
	StartAttempt(ctx context.Context, info AttemptInfo, headers map[string]string) (_ context.Context, end func(AttemptResult))
}

// SendInfo describes a send to a Tracer.
type SendInfo struct {
	Actor string
	Type  string // the tasks' type: WithType's, or the payload's Go type
	// Count is how many tasks the send stores: 1 for Send and SendTx,
	// len(payloads) for SendBatch and SendBatchTx.
	Count int
	Batch bool // SendBatch or SendBatchTx
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
	// counts, a run given back does not. It starts again at 1 after a
	// replay.
	Attempt int
	// Lost is how many of the task's runs lost their worker.
	Lost int
	// Enqueued is when the task was sent, or replayed, by the database's
	// clock.
	Enqueued time.Time
	// Due is when the task became due for this attempt, by the database's
	// clock, for every attempt: for the first, Enqueued for a task due at
	// once, its RunAt (Enqueued if that was earlier), or Enqueued plus its
	// After; after a failed run, when its Backoff ended; after a run
	// given back, when it was given back; after a lost run, when the lost
	// run's lease ran out. Its time in queue is the attempt's start less
	// Due.
	Due time.Time
}

// An Outcome is what became of an attempt.
type Outcome uint8

const (
	// OutcomeCompleted: the handler succeeded and its completion
	// committed.
	OutcomeCompleted Outcome = iota + 1
	// OutcomeRetried: the handler failed and the task is due again after
	// its Backoff.
	OutcomeRetried
	// OutcomeDeadLettered: the task went to the dead letters for
	// AttemptResult.Reason — attempts spent, a permanent error, lost too
	// often, undecodable — other than Cancel.
	OutcomeDeadLettered
	// OutcomeCanceled: Actor.Cancel canceled the task, which went to the
	// dead letters with ReasonCanceled.
	OutcomeCanceled
	// OutcomeLost: the lease was lost, so the task runs again elsewhere,
	// or the outcome could not be recorded, so it runs again once its
	// lease runs out.
	OutcomeLost
	// OutcomeGivenBack: Close stopped waiting for the handler and gave the
	// task back, its attempt not charged.
	OutcomeGivenBack
	// OutcomeSnoozed: the handler returned Snooze; the task is due again
	// after the delay, its attempt not charged. AttemptResult.Err is the
	// *SnoozeError.
	OutcomeSnoozed
)

var outcomeNames = [...]string{"", "completed", "retried", "dead_lettered", "canceled", "lost", "given_back", "snoozed"}

// String returns the outcome's name, such as "dead_lettered": the value
// otelpgactor gives its outcome attribute.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// AttemptResult is what a Tracer's end function learns of an attempt.
type AttemptResult struct {
	Outcome Outcome
	// Reason is why the task was dead-lettered, for OutcomeDeadLettered
	// and OutcomeCanceled; zero otherwise.
	Reason Reason
	// Err is the handler's error, or why the task did not run (a
	// *DecodeError, ErrCanceled); nil when the handler succeeded.
	Err error
}

// headerPrefix begins the names of the headers pgactor keeps for itself
// in a task's headers, next to a tracer's: a schedule's (HeaderSchedule,
// HeaderPeriod). A tracer neither stores nor receives them.
const headerPrefix = "pgactor-"

// traceSend runs a send under a.tracer: it stores the tracer's headers
// with the tasks.
func (a *Actor[T]) traceSend(ctx context.Context, tx pgx.Tx, payloads []T, o *sendOptions, batch bool) ([]uint64, error) {
	ctx, headers, end := a.tracer.StartSend(ctx, SendInfo{
		Actor: a.name, Type: o.typ, Count: len(payloads), Batch: batch, RunAt: o.at, After: o.delay,
	})
	o.headers = encodeHeaders(headers)
	ids, err := a.sendEncoded(ctx, tx, payloads, o, batch)
	end(ids, err)
	return ids, err
}

// encodeHeaders returns the JSON object a task stores for a tracer's
// headers, less those whose names are pgactor's; nil when none are left.
func encodeHeaders(headers map[string]string) []byte {
	headers = maps.Clone(headers) // the tracer's map stays as it was
	maps.DeleteFunc(headers, isPgactorHeader)
	if len(headers) == 0 {
		return nil
	}
	b, _ := json.Marshal(headers) // a map of strings always encodes
	return b
}

// tracerHeaders returns the headers stored with l's task for a tracer:
// all but pgactor's own.
func tracerHeaders(l *lease) (map[string]string, error) {
	if l.headers == nil {
		return nil, nil
	}
	var headers map[string]string
	if err := json.Unmarshal(l.headers, &headers); err != nil {
		return nil, err
	}
	maps.DeleteFunc(headers, isPgactorHeader)
	if len(headers) == 0 {
		headers = nil
	}
	return headers, nil
}

// isPgactorHeader reports whether the header named k is pgactor's.
func isPgactorHeader(k, _ string) bool { return strings.HasPrefix(k, headerPrefix) }

// dueAt returns when l's task became due for l's run, by the database's
// clock: the time the fetch returned, but never before the task was
// enqueued, which a RunAt in the past would make it.
func (l *lease) dueAt() time.Time {
	if l.due.Before(l.enqueued) {
		return l.enqueued
	}
	return l.due
}

// An attemptTrace is a traced attempt's end, and its result so far. Only
// the worker running the attempt touches it. Its methods do nothing on a
// nil attemptTrace, the attempts of an actor without a Tracer.
type attemptTrace struct {
	end    func(AttemptResult)
	result AttemptResult
	ended  bool
}

// startAttempt starts the trace of l's attempt, when the actor has a
// Tracer, and returns the handler's context.
func (a *Actor[T]) startAttempt(worker string, l *lease) context.Context {
	if a.tracer == nil {
		return l.ctx
	}
	headers, err := tracerHeaders(l)
	if err != nil {
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: a task's headers are not a JSON object of strings; its attempt starts a trace of its own",
			slog.String("actor", a.name), slog.Int64("task_id", l.id), slog.Any("error", err))
	}
	ctx, end := a.tracer.StartAttempt(l.ctx, AttemptInfo{
		Actor: a.name, Worker: worker, ID: uint64(l.id), Type: l.typ,
		Attempt: l.attempt, Lost: l.lost, Enqueued: l.enqueued, Due: l.dueAt(),
	}, headers)
	l.trace = &attemptTrace{end: end}
	return ctx
}

// failed records the error of the attempt's handler, or why it did not
// run.
func (t *attemptTrace) failed(err error) {
	if t != nil && err != nil {
		t.result.Err = err
	}
}

// settled records the attempt's outcome, once its statement has matched
// the lease.
func (t *attemptTrace) settled(o Outcome) {
	if t != nil {
		t.result.Outcome = o
	}
}

// deadLettered records that the task went to the dead letters for reason.
func (t *attemptTrace) deadLettered(reason Reason) {
	if t != nil {
		t.result.Outcome, t.result.Reason = OutcomeDeadLettered, reason
		if reason == ReasonCanceled {
			t.result.Outcome = OutcomeCanceled
		}
	}
}

// finish hands the result to the Tracer, once. An attempt whose outcome
// was not recorded counts as lost: its task runs again once the lease
// runs out.
func (t *attemptTrace) finish() {
	if t == nil || t.ended {
		return
	}
	t.ended = true
	if t.result.Outcome == 0 {
		t.result.Outcome = OutcomeLost
	}
	t.end(t.result)
}
