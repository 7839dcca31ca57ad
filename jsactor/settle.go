package jsactor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/actor/tasktrace"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// settleTimeout bounds each publish and acknowledgement that settles a
// task; the lease is the natural bound, since past it the task is
// another's.
func (a *Actor[T]) settleTimeout() time.Duration { return max(a.set.lease/2, time.Second) }

// settle ends a run of h whose handler returned err: it acknowledges a
// success, schedules a retry, dead-letters the task or snoozes it — unless
// this process can no longer prove its lease, in which case the task is
// another's and the result is dropped.
func (a *Actor[T]) settle(worker string, h *held, err error) {
	if !h.claim(heldSettled) {
		return // Close gave it back
	}
	defer a.release(h)
	h.trace.failed(err)
	if !a.leaseHeld(h) {
		a.log.Warn("lease lost before the result could be recorded: the result is dropped and the task runs again",
			"task_id", h.rec.id, "attempt", h.attempt, "handler_error", err)
		return
	}
	if err == nil {
		if a.ack(h, countCompleted) {
			h.trace.settled(tasktrace.OutcomeCompleted)
		}
		return
	}
	if se := snoozed(err); se != nil {
		if se.Delay >= 0 {
			a.snooze(h, se.Delay)
			return
		}
		err = fmt.Errorf("jsactor: the handler returned Snooze(%v): the delay must be 0 or more; the attempt counts as failed", se.Delay)
		h.trace.failed(err)
	}
	final := h.attempt >= a.set.maxAttempts || errors.Is(err, actor.ErrPermanent)
	a.counts.add(countFailed, 1)
	a.report(&actor.TaskError{Actor: a.name, Worker: worker, ID: h.rec.id, Type: a.typeOf(h), Attempt: h.attempt, Final: final, Err: err})
	switch {
	case errors.Is(err, actor.ErrPermanent):
		a.deadLetter(h, ReasonPermanent, err, true)
	case final:
		a.deadLetter(h, ReasonMaxAttempts, err, true)
	default:
		a.retry(h, err)
	}
}

// ack acknowledges h's message, waiting for the server to confirm, and
// counts what it ended as.
func (a *Actor[T]) ack(h *held, k counter) bool {
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	if err := h.msg.DoubleAck(ctx); err != nil {
		a.log.Warn("acknowledgement not confirmed: the task may run again", "task_id", h.rec.id, "error", err)
		return false
	}
	a.counts.add(k, 1)
	return true
}

// copyTo publishes a copy of h's task, as rec describes it, to place, and
// acknowledges the original. A copy that was stored but whose original
// was not acknowledged is delivered once more as a lost run; its own
// message ID keeps the second copy that run would publish out.
func (a *Actor[T]) copyTo(h *held, place string, rec record) bool {
	rec.gen = h.rec.gen + 1
	m := &nats.Msg{Subject: a.l.subject(place, keyToken(rec.key)), Header: rec.header(), Data: h.msg.Data()}
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	if _, err := a.js.PublishMsg(ctx, m, jetstream.WithMsgID(copyID(&rec))); err != nil {
		a.log.Warn("could not store the task's next copy: it runs again once its lease runs out, as a lost run",
			"task_id", h.rec.id, "to", place, "error", err)
		return false
	}
	if err := h.msg.DoubleAck(ctx); err != nil {
		a.log.Warn("acknowledgement not confirmed after the task's copy was stored: the task may run twice", "task_id", h.rec.id, "error", err)
		return false
	}
	return true
}

// next returns the record of h's task as its next copy starts: the
// deliveries of this copy so far are charged, lost or (uncharged) not
// counted.
func (a *Actor[T]) next(h *held, charged bool) record {
	rec := h.rec
	rec.lost += h.delivered - 1
	rec.charged = h.attempt
	if !charged {
		rec.charged--
	}
	rec.due = time.Time{}
	return rec
}

// retry schedules the next attempt of h's task after its backoff.
func (a *Actor[T]) retry(h *held, err error) {
	rec := a.next(h, true)
	rec.lastErr = errorText(err)
	rec.due = time.Now().Add(a.set.backoff.Delay(h.attempt, rand.Float64()))
	if a.copyTo(h, placeBackoff, rec) {
		a.counts.add(countRetried, 1)
		h.trace.settled(tasktrace.OutcomeRetried)
	}
}

// snooze has h's task wait d, its attempt not charged.
func (a *Actor[T]) snooze(h *held, d time.Duration) {
	rec := a.next(h, false)
	place := placeReady
	if d > 0 {
		rec.due = time.Now().Add(d)
		place = placeDelayed
	}
	if a.copyTo(h, place, rec) {
		h.trace.settled(tasktrace.OutcomeSnoozed)
	}
}

// giveBack returns h's task to the queue at once, its attempt not charged:
// Close could not wait for it.
func (a *Actor[T]) giveBack(h *held) {
	defer a.release(h)
	if !a.leaseHeld(h) {
		return // the task is another worker's by now
	}
	a.gaveBack.Add(1)
	a.copyTo(h, placeReady, a.next(h, false))
}

// deadLetter moves h's task to the dead-letter stream, then acknowledges
// it. The dead letter's message ID is the task's, so a task dead-lettered
// twice — its first worker's acknowledgement was lost — is stored once.
// ran says whether this delivery ran the handler, and so is one of the
// task's attempts.
func (a *Actor[T]) deadLetter(h *held, reason Reason, cause error, ran bool) {
	defer a.release(h)
	rec := h.rec
	rec.lost += h.delivered - 1
	if cause != nil {
		rec.lastErr = errorText(cause)
	}
	attempts := h.attempt
	if !ran {
		attempts--
		rec.started = time.Time{}
	}
	hdr := rec.header()
	hdr.Del(hdrGen)
	hdr.Del(hdrDue)
	hdr.Del(hdrCharged)
	hdr.Set(hdrReason, reason.String())
	hdr.Set(hdrAttempts, strconv.Itoa(attempts))
	m := &nats.Msg{Subject: a.l.deadSubject(), Header: hdr, Data: h.msg.Data()}
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	if _, err := a.js.PublishMsg(ctx, m, jetstream.WithMsgID("dead-"+strconv.FormatUint(rec.id, 10))); err != nil {
		a.log.Warn("could not store the dead letter: the task runs again once its lease runs out", "task_id", rec.id, "reason", reason, "error", err)
		return
	}
	if err := h.msg.DoubleAck(ctx); err != nil {
		a.log.Warn("acknowledgement not confirmed after the dead letter was stored", "task_id", rec.id, "error", err)
		return
	}
	a.counts.add(countDeadLettered, 1)
	h.trace.deadLettered(reason, cause)
}
