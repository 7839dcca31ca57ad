package jsactor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/actorpool/actorpool/internal/errs"
	"github.com/nats-io/nats.go"
)

// A Tracer follows the actor's tasks from their send to each of their
// attempts, in whichever process runs them: set it as Config.Tracer of
// the actors that send and of those that run. It is package tasktrace's
// hook, shared with pgactor; package oteltask implements it with
// OpenTelemetry (oteltask.NewTracer("jsactor")).
//
// The headers StartSend returns travel as the task's NATS message
// headers, less any whose name begins "Actorpool-" or "Nats-" (jsactor's
// and the server's own, in any case) or that a header cannot hold. They
// go with every copy of the task — a retry, a give-back, a snooze, a
// delayed task come due — into the dead letter, and back on Replay, and
// StartAttempt receives them at each attempt, in any process, whether or
// not the processes between had a Tracer. An actor without a Tracer adds
// no headers and spends nothing per send or attempt.
type Tracer = tasktrace.Tracer

// traceHeader returns the headers of h that are a tracer's: all but
// jsactor's and the server's own. It allocates only when there are any.
func traceHeader(h nats.Header) nats.Header {
	var out nats.Header
	for k, v := range h {
		if len(v) > 0 && !reservedHeader(k) {
			if out == nil {
				out = nats.Header{}
			}
			out[k] = v
		}
	}
	return out
}

// addTrace adds a tracer's headers to h.
func addTrace(h, trace nats.Header) {
	for k, v := range trace {
		h[k] = v
	}
}

// reservedHeader reports whether the header named k is jsactor's or the
// server's: a tracer neither sets nor receives it.
func reservedHeader(k string) bool {
	return hasPrefixFold(k, "Actorpool-") || hasPrefixFold(k, "Nats-")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// fromTracer returns the headers a tracer returned as message headers,
// less those reserved and those a NATS header cannot carry: a name with
// a colon, a space or a control character, a value with a line break.
func fromTracer(m map[string]string) nats.Header {
	var out nats.Header
	for k, v := range m {
		if reservedHeader(k) || !headerName(k) || strings.ContainsAny(v, "\r\n") {
			continue
		}
		if out == nil {
			out = nats.Header{}
		}
		out.Set(k, v)
	}
	return out
}

func headerName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c == ':' || c == 0x7f {
			return false
		}
	}
	return true
}

// traceSend runs a send under a.tracer: its headers go with each task. A
// panic of the tracer as the send starts fails the send, which stores
// nothing; one as it ends is logged, and the send's result stands: its
// caller learns which of its tasks are stored, rather than the tracer's
// panic.
func (a *Actor[T]) traceSend(ctx context.Context, payloads []T, o *sendOptions, batch bool) ([]uint64, error) {
	typ := o.typ
	if typ == "" {
		typ = a.typ
	}
	info := tasktrace.SendInfo{Actor: a.name, Type: typ, Count: len(payloads), Batch: batch, RunAt: o.runAt, After: o.after}
	var headers map[string]string
	var end func([]uint64, error)
	if err := errs.Protect("Tracer.StartSend", func() { ctx, headers, end = a.tracer.StartSend(ctx, info) }); err != nil {
		return make([]uint64, len(payloads)), fmt.Errorf("jsactor: send to %q: nothing stored: %w", a.name, err)
	}
	o.trace = fromTracer(headers)
	ids, err := a.publishTasks(ctx, payloads, o, batch)
	// The IDs of a batch's tasks not stored are 0; a Tracer gets those
	// that were, or none.
	traced := ids
	if err != nil {
		traced = storedIDs(ids)
	}
	if perr := errs.Protect("Tracer.StartSend's end", func() { end(traced, err) }); perr != nil {
		a.log.LogAttrs(ctx, slog.LevelError, "tracer panicked ending a send; the send's result stands",
			slog.String("actor", a.name), slog.Int("tasks", len(payloads)), slog.Any("send_error", err), slog.Any("panic", perr))
	}
	return ids, err
}

// storedIDs returns the IDs in ids that are set, or nil when none is.
func storedIDs(ids []uint64) []uint64 {
	var out []uint64
	for _, id := range ids {
		if id != 0 {
			out = append(out, id)
		}
	}
	return out
}

// An attemptTrace is a traced attempt's end, and its result so far. Only
// the worker running the attempt touches it. Its methods do nothing on a
// nil attemptTrace, the attempts of an actor without a Tracer.
type attemptTrace struct {
	end    func(tasktrace.AttemptResult)
	result tasktrace.AttemptResult
}

// startAttempt starts the trace of h's attempt, when the actor has a
// Tracer, and returns the context the handler's derives from. A panic of
// the tracer is returned as an *actor.PanicError, for the attempt to fail
// with: the attempt is then not traced.
func (a *Actor[T]) startAttempt(worker string, h *held) (context.Context, error) {
	if a.tracer == nil {
		return a.runCtx, nil
	}
	info := tasktrace.AttemptInfo{
		Actor: a.name, Worker: worker, ID: h.rec.id, Type: a.typeOf(h),
		Attempt: h.attempt, Lost: h.rec.lost + h.delivered - 1, Enqueued: h.rec.enqueued,
	}
	if md, err := h.msg.Metadata(); err == nil && h.delivered == 1 {
		// This copy was stored when the task came due: sent, come due
		// from the delayed or backoff subject, given back or snoozed.
		// When a lost run's lease ran out is not known.
		info.Due = md.Timestamp
		if info.Due.Before(info.Enqueued) {
			info.Due = info.Enqueued
		}
	}
	var headers map[string]string
	if len(h.rec.trace) > 0 {
		headers = make(map[string]string, len(h.rec.trace))
		for k, v := range h.rec.trace {
			headers[k] = v[0]
		}
	}
	var ctx context.Context
	var end func(tasktrace.AttemptResult)
	if err := errs.Protect("Tracer.StartAttempt", func() { ctx, end = a.tracer.StartAttempt(a.runCtx, info, headers) }); err != nil {
		return a.runCtx, err
	}
	h.trace = &attemptTrace{end: end}
	return ctx, nil
}

// failed records the error of the attempt's handler, or why it did not
// run.
func (t *attemptTrace) failed(err error) {
	if t != nil && err != nil {
		t.result.Err = err
	}
}

// settled records the attempt's outcome, once the server has it.
func (t *attemptTrace) settled(o tasktrace.Outcome) {
	if t != nil {
		t.result.Outcome = o
	}
}

// deadLettered records that the task went to the dead letters for reason,
// with cause, when it did not run, as its error.
func (t *attemptTrace) deadLettered(reason Reason, cause error) {
	if t != nil {
		t.result.Outcome, t.result.Reason = tasktrace.OutcomeDeadLettered, reason
		if t.result.Err == nil {
			t.result.Err = cause
		}
	}
}

// endTrace hands the result of h's attempt to the Tracer. An attempt
// whose outcome was not recorded was given back by Close, or counts as
// lost: its task runs again once the lease runs out. The outcome is
// recorded by then, and stands: a panic of the tracer is only logged.
func (a *Actor[T]) endTrace(worker string, h *held) {
	t := h.trace
	if t == nil {
		return
	}
	h.trace = nil
	if t.result.Outcome == 0 {
		t.result.Outcome = tasktrace.OutcomeLost
		if h.state.Load() == heldGivenBack {
			t.result.Outcome = tasktrace.OutcomeGivenBack
		}
	}
	if err := errs.Protect("Tracer.StartAttempt's end", func() { t.end(t.result) }); err != nil {
		a.log.LogAttrs(context.Background(), slog.LevelError, "tracer panicked ending an attempt; the attempt's outcome stands",
			slog.String("actor", a.name), slog.String("worker", worker), slog.Uint64("task_id", h.rec.id),
			slog.String("outcome", t.result.Outcome.String()), slog.Any("panic", err))
	}
}
