package pgactor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/internal/errs"
	"github.com/jackc/pgx/v5"
)

// A Tracer follows a durable actor's tasks from their send to each of
// their attempts, in whichever process runs them: set it as
// Config.Tracer. It is package tasktrace's hook, which jsactor shares,
// with pgactor's AttemptResult; package otelpgactor implements it with
// OpenTelemetry, and pgactor itself imports no tracing library.
//
// Its StartSend is called by Send, SendTx, SendBatch and SendBatchTx,
// once their options are checked, and runs the send's statement with the
// context it returns. The headers it returns are stored with each task,
// in the tasks' headers column, but for names beginning "pgactor-",
// which are pgactor's and dropped; StartAttempt receives them back, in
// another process as well as this one, never pgactor's own (such as
// HeaderPeriod), and nil for a task sent by a schedule. Headers move with
// the task: into the dead letters when it is dead-lettered, and back to
// the queue when it is replayed, so that a replayed task's attempts
// continue the trace of its send. An actor without a Tracer stores no
// headers (the column is NULL, but for a scheduled task's own, see
// ScheduledFor) and costs nothing per send or attempt.
type Tracer = tasktrace.TracerOf[AttemptResult]

// SendInfo describes a send to a Tracer: package tasktrace's, which
// jsactor's Tracer shares.
type SendInfo = tasktrace.SendInfo

// AttemptInfo describes an attempt to a Tracer: package tasktrace's. Its
// Enqueued and Due are by the database's clock, and Due is never zero.
type AttemptInfo = tasktrace.AttemptInfo

// An Outcome is what became of an attempt: package tasktrace's.
type Outcome = tasktrace.Outcome

// The outcomes, as package tasktrace names them.
const (
	OutcomeCompleted    = tasktrace.OutcomeCompleted
	OutcomeRetried      = tasktrace.OutcomeRetried
	OutcomeDeadLettered = tasktrace.OutcomeDeadLettered
	OutcomeCanceled     = tasktrace.OutcomeCanceled // Actor.Cancel canceled the task: ReasonCanceled
	OutcomeLost         = tasktrace.OutcomeLost
	OutcomeGivenBack    = tasktrace.OutcomeGivenBack
	OutcomeSnoozed      = tasktrace.OutcomeSnoozed
)

// AttemptResult is what a Tracer's end function learns of an attempt:
// its Reason is why the task was dead-lettered, for OutcomeDeadLettered
// and OutcomeCanceled, and zero otherwise; its Err the handler's error,
// or why the task did not run (a *DecodeError, ErrCanceled).
type AttemptResult = tasktrace.AttemptResultOf[Reason]

// headerPrefix begins the names of the headers pgactor keeps for itself
// in a task's headers, next to a tracer's: a schedule's (HeaderSchedule,
// HeaderPeriod). A tracer neither stores nor receives them.
const headerPrefix = "pgactor-"

// traceSend runs a send under a.tracer: it stores the tracer's headers
// with the tasks. A panic of the tracer as the send starts fails the
// send, which stores nothing; one as it ends is logged, and the send's
// result stands: its caller learns whether its tasks are stored, rather
// than the tracer's panic.
func (a *Actor[T]) traceSend(ctx context.Context, tx pgx.Tx, payloads []T, o *sendOptions, batch bool) ([]uint64, error) {
	info := SendInfo{Actor: a.name, Type: o.typ, Count: len(payloads), Batch: batch, RunAt: o.at, After: o.delay}
	var headers map[string]string
	var end func([]uint64, error)
	if err := errs.Protect("Tracer.StartSend", func() { ctx, headers, end = a.tracer.StartSend(ctx, info) }); err != nil {
		return nil, fmt.Errorf("pgactor: send to %q: nothing stored: %w", a.name, err)
	}
	o.headers = encodeHeaders(headers)
	ids, err := a.sendEncoded(ctx, tx, payloads, o, batch)
	if perr := errs.Protect("Tracer.StartSend's end", func() { end(ids, err) }); perr != nil {
		a.log.LogAttrs(ctx, slog.LevelError, "pgactor: tracer panicked ending a send; the send's result stands",
			slog.String("actor", a.name), slog.Int("tasks", len(payloads)), slog.Any("send_error", err), slog.Any("panic", perr))
	}
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
// Tracer, and returns the handler's context. A panic of the tracer is
// returned as an *actor.PanicError, for the attempt to fail with: the
// attempt is then not traced.
func (a *Actor[T]) startAttempt(worker string, l *lease) (context.Context, error) {
	if a.tracer == nil {
		return l.ctx, nil
	}
	headers, err := tracerHeaders(l)
	if err != nil {
		a.log.LogAttrs(context.Background(), slog.LevelWarn, "pgactor: a task's headers are not a JSON object of strings; its attempt starts a trace of its own",
			slog.String("actor", a.name), slog.Int64("task_id", l.id), slog.Any("error", err))
	}
	info := AttemptInfo{
		Actor: a.name, Worker: worker, ID: uint64(l.id), Type: l.typ,
		Attempt: l.attempt, Lost: l.lost, Enqueued: l.enqueued, Due: l.dueAt(),
	}
	var ctx context.Context
	var end func(AttemptResult)
	if err := errs.Protect("Tracer.StartAttempt", func() { ctx, end = a.tracer.StartAttempt(l.ctx, info, headers) }); err != nil {
		return l.ctx, err
	}
	l.trace = &attemptTrace{end: end}
	return ctx, nil
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

// finish hands the result to the Tracer, once, and returns the panic of
// its end function as an *actor.PanicError. An attempt whose outcome was
// not recorded counts as lost: its task runs again once the lease runs
// out.
func (t *attemptTrace) finish() error {
	if t == nil || t.ended {
		return nil
	}
	t.ended = true
	if t.result.Outcome == 0 {
		t.result.Outcome = OutcomeLost
	}
	return errs.Protect("Tracer.StartAttempt's end", func() { t.end(t.result) })
}

// endAttempt ends the trace of l's attempt. The outcome is recorded by
// then, and stands: a panic of the tracer is only logged.
func (a *Actor[T]) endAttempt(worker string, l *lease) {
	if err := l.trace.finish(); err != nil {
		a.log.LogAttrs(context.Background(), slog.LevelError, "pgactor: tracer panicked ending an attempt; the attempt's outcome stands",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Int64("task_id", l.id),
			slog.String("outcome", l.trace.result.Outcome.String()), slog.Any("panic", err))
	}
}
