package jsactor

import (
	"context"
	"strings"

	"github.com/actorpool/actorpool/actor/tasktrace"
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

// traceSend runs a send under a.tracer: its headers go with each task.
func (a *Actor[T]) traceSend(ctx context.Context, payloads []T, o *sendOptions, batch bool) ([]uint64, error) {
	typ := o.typ
	if typ == "" {
		typ = a.typ
	}
	ctx, headers, end := a.tracer.StartSend(ctx, tasktrace.SendInfo{
		Actor: a.name, Type: typ, Count: len(payloads), Batch: batch, RunAt: o.runAt, After: o.after,
	})
	o.trace = fromTracer(headers)
	ids, err := a.publishTasks(ctx, payloads, o, batch)
	if err != nil {
		// The IDs of a batch's tasks not stored are 0; a Tracer gets
		// those that were, or none.
		end(storedIDs(ids), err)
	} else {
		end(ids, nil)
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
// Tracer, and returns the context the handler's derives from.
func (a *Actor[T]) startAttempt(worker string, h *held) context.Context {
	if a.tracer == nil {
		return a.runCtx
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
	ctx, end := a.tracer.StartAttempt(a.runCtx, info, headers)
	h.trace = &attemptTrace{end: end}
	return ctx
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
// lost: its task runs again once the lease runs out.
func (h *held) endTrace() {
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
	t.end(t.result)
}
