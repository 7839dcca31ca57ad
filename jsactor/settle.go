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
	"github.com/nats-io/nuid"
)

// faults are failures a test injects where the network can fail: each
// func, when set, runs at its step with the task's ID. A test sets them
// through Actor.faults, so that a fault can be injected once the actor
// runs without a race.
type faults struct {
	// beforeStore runs before a task's next copy or its dead letter is
	// published: a test blocks in it to make the store slow.
	beforeStore func(id uint64)
	// storeAnswer runs as the server's answer to the store of a task's
	// next copy or its dead letter comes back: an error stands for the
	// answer lost on its way — a dropped connection, a timeout — after
	// the server stored it. msgID is the store's message ID.
	storeAnswer func(msgID string) error
	// afterStore runs once a task's next copy or its dead letter is
	// stored, before the original is acknowledged: an error stands for
	// the acknowledgement's own failure — a dropped connection, a
	// restarted server, a timeout — and the acknowledgement is not sent.
	afterStore func(id uint64) error
	// renew runs for each lease a heartbeat renews: false drops the
	// renewal, as though its in-progress acknowledgement were lost on
	// the way, so that a test can make a lease run out under a worker
	// that is still settling.
	renew func(id uint64, delivered int) bool
	// probe runs before a redelivered task asks the server whether an
	// earlier delivery settled it (superseded): a test blocks in it to
	// make those round trips slow; an error stands for a question the
	// server did not answer, and none is asked.
	probe func(id uint64, delivered int) error
	// fetched wraps each message the fetcher takes before it is held: a
	// test's wrapper fails the message's acknowledgements as the network
	// would, before or after the server applied them.
	fetched func(jetstream.Msg) jetstream.Msg
	// dueCopied runs once a task that came due is stored among the ready
	// tasks, before its waiting message is acknowledged: a test deletes
	// that message there.
	dueCopied func(id uint64)
}

// dueCopiedFault runs the test's dueCopied fault, if any.
func (a *Actor[T]) dueCopiedFault(id uint64) {
	if f := a.faults.Load(); f != nil && f.dueCopied != nil {
		f.dueCopied(id)
	}
}

// wrapFetched runs the test's fetched fault, if any.
func (a *Actor[T]) wrapFetched(msg jetstream.Msg) jetstream.Msg {
	if f := a.faults.Load(); f != nil && f.fetched != nil {
		return f.fetched(msg)
	}
	return msg
}

// renews runs the test's renew fault, if any.
func (a *Actor[T]) renews(h *held) bool {
	if f := a.faults.Load(); f != nil && f.renew != nil {
		return f.renew(h.rec.id, h.delivered)
	}
	return true
}

// beforeStore runs the test's beforeStore fault, if any.
func (a *Actor[T]) beforeStore(id uint64) {
	if f := a.faults.Load(); f != nil && f.beforeStore != nil {
		f.beforeStore(id)
	}
}

// probing runs the test's probe fault, if any.
func (a *Actor[T]) probing(h *held) error {
	if f := a.faults.Load(); f != nil && f.probe != nil {
		return f.probe(h.rec.id, h.delivered)
	}
	return nil
}

// storeAnswer runs the test's storeAnswer fault, if any.
func (a *Actor[T]) storeAnswer(msgID string) error {
	if f := a.faults.Load(); f != nil && f.storeAnswer != nil {
		return f.storeAnswer(msgID)
	}
	return nil
}

// afterStore runs the test's afterStore fault, if any.
func (a *Actor[T]) afterStore(id uint64) error {
	if f := a.faults.Load(); f != nil && f.afterStore != nil {
		return f.afterStore(id)
	}
	return nil
}

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
	if a.superseded(h) != earlierNone {
		// An earlier delivery's copy or dead letter was stored while this
		// run ran: the task lives on there, and this run's result would
		// end it a second time. Or the server could not say: the result
		// is dropped and the task runs again.
		return
	}
	if h.delivered > 1 && !a.leaseHeld(h) {
		// superseded's round trips outlasted the lease proven before
		// them (TestSlowProbeLeaseLost).
		a.log.Warn("lease lost while asking whether an earlier delivery settled the task: the result is dropped and the task runs again",
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
	a.report(&actor.TaskError{Actor: a.name, Worker: worker, ID: h.rec.id, Type: a.typeOf(h), Attempt: h.attempt, Final: final, Err: err}, func() {
		switch {
		case errors.Is(err, actor.ErrPermanent):
			a.deadLetter(h, ReasonPermanent, err, true)
		case final:
			a.deadLetter(h, ReasonMaxAttempts, err, true)
		default:
			a.retry(h, err)
		}
	})
}

// ack acknowledges h's message, waiting for the server to confirm, and
// counts what it ended as. A try whose answer does not come is made again
// while the lease holds, as store's are: the server answers an
// acknowledgement of a message it no longer holds as it did the first, so
// that an acknowledgement whose answer was lost is counted, and one lost
// on its way does not leave the task to run again
// (TestAckUnansweredCounted). One not confirmed by the end is not
// counted, though the server may have applied it (see Stats in the
// package documentation).
func (a *Actor[T]) ack(h *held, k counter) bool {
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	for {
		try, stop := context.WithTimeout(ctx, a.settleTimeout()/2)
		err := h.msg.DoubleAck(try)
		stop()
		if err == nil {
			a.counts.add(k, 1)
			return true
		}
		if retryable(err) && a.leaseHeld(h) {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		// The lease is proven as the next try leaves, not before the
		// pause: the server applies an acknowledgement sent after it to
		// the task's next delivery, another worker's
		// (TestAckRetryLeaseLost).
		if !retryable(err) || ctx.Err() != nil || !a.leaseHeld(h) {
			a.log.Warn("acknowledgement not confirmed: the task may run again", "task_id", h.rec.id, "error", err)
			return false
		}
	}
}

// copyTo publishes a copy of h's task, as rec describes it, to place, and
// acknowledges the original; it reports whether this call stored the
// copy, which then stands for the task whether or not the acknowledgement
// comes through. The acknowledgement is sent only while the lease still
// holds: a store slow enough to outlast it leaves the original to its
// next delivery. That delivery, or one after an acknowledgement that was
// lost, finds the copy by its message ID (see superseded) and
// acknowledges the original without running it.
func (a *Actor[T]) copyTo(h *held, place string, rec record) bool {
	rec.gen = h.rec.gen + 1
	m := &nats.Msg{Subject: a.l.subject(place, keyToken(rec.key)), Header: rec.header(), Data: h.msg.Data()}
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	a.beforeStore(h.rec.id)
	stored, err := a.store(ctx, m, copyID(&rec))
	if err != nil {
		a.log.Warn("could not store the task's next copy: it runs again once its lease runs out, as a lost run",
			"task_id", h.rec.id, "to", place, "error", err)
		return false
	}
	if !stored {
		// An earlier delivery stored it, after this one checked: the
		// task lives on as that copy, not as this run's.
		a.log.Warn("the task's next copy was stored by an earlier delivery: this run's result is dropped", "task_id", h.rec.id)
	}
	a.ackStored(ctx, h, "copy")
	return stored
}

// store publishes m, a task's next copy or its dead letter, with message
// ID id, and reports whether this delivery stored it: the server did not
// know the ID, or knew it only after a try of this delivery went
// unanswered. A try whose answer does not come is made again while ctx
// lasts, as Send's are, and the server answers it as a duplicate of the
// first if that was stored. Given up on, the store would be found by the
// original's next delivery, which settles the task without counting it:
// the retry or the dead letter would be counted nowhere
// (TestStoreAnswerLostCounted).
func (a *Actor[T]) store(ctx context.Context, m *nats.Msg, id string) (bool, error) {
	tried := false
	for {
		try, cancel := context.WithTimeout(ctx, a.settleTimeout()/2)
		pa, err := a.js.PublishMsg(try, m, jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			err = a.storeAnswer(id)
		}
		if err == nil {
			return !pa.Duplicate || tried, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return false, err
		}
		tried = true
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ackStored acknowledges h's message once its task's next copy or dead
// letter, what, is stored — unless the lease ran out meanwhile: the
// server would accept the late acknowledgement even from a worker it no
// longer counts as the task's, so the lease is proven again first.
func (a *Actor[T]) ackStored(ctx context.Context, h *held, what string) {
	if !a.leaseHeld(h) {
		a.log.Warn("the lease ran out while the task's "+what+" was stored: the original is left to its next delivery, which acknowledges it without running it",
			"task_id", h.rec.id)
		return
	}
	err := a.afterStore(h.rec.id)
	if err == nil {
		err = h.msg.DoubleAck(ctx)
	}
	if err != nil {
		a.log.Warn("acknowledgement not confirmed after the task's "+what+" was stored: the original's next delivery acknowledges it without running it",
			"task_id", h.rec.id, "error", err)
	}
}

// An earlier is what superseded learned of a redelivered task's earlier
// deliveries.
type earlier int

const (
	earlierNone    earlier = iota // none settled the task: this delivery runs or settles it
	earlierSettled                // one stored the task's next copy or its dead letter
	earlierUnknown                // the server did not say: the delivery is left, as a lost run
)

// superseded reports whether h's task is settled already (earlierSettled)
// or cannot be settled now (earlierUnknown), and h needs nothing more
// from this worker. Only a redelivered message can be: an earlier
// delivery may have stored the task's next copy or its dead letter, and
// then lost the acknowledgement of the original, or held it back because
// its lease ran out. Such a message is acknowledged, not run or settled
// again: its task lives on as its copy, or has ended. A message whose
// earlier deliveries cannot be known, the server being out of reach, is
// left to be delivered again, as a lost run.
//
// What was stored is known from the server's duplicate window: a copy or
// dead letter stored more than the stream's duplicate window
// (Config.DedupWindow) before the redelivery asks is no longer found, and
// the task then runs again beside it.
//
// On a replicated stream the server checks the probe's expectation only
// as each replica applies it, after its leader proposed it, and each
// replica takes the refusal for a failed write and stops the stream: no
// send is stored after it (see keyRefused; TestClusterLeaderKill failed
// with probes made here). So no probe is made on a replicated stream —
// its replicas read as it is configured now, since an operator may
// replicate a stream the actor made with one
// (TestClusterReplicasAddedLater) — and there a redelivered original runs
// again, as it did before: its task may end twice.
func (a *Actor[T]) superseded(h *held) earlier {
	if h.delivered <= 1 {
		return earlierNone
	}
	err := a.probing(h)
	ctx, cancel := context.WithTimeout(context.Background(), a.settleTimeout())
	defer cancel()
	single := false
	if err == nil {
		single, err = a.singleServer(ctx, a.l.workStream(), a.l.deadStream())
	}
	if err == nil && !single {
		return earlierNone
	}
	copied, dead := false, false
	if err == nil {
		next := h.rec
		next.gen++
		copied, err = probeID(ctx, a.js, a.l.subject(placeReady, keyToken(h.rec.key)), copyID(&next))
	}
	if err == nil && !copied {
		dead, err = probeID(ctx, a.js, a.l.deadSubject(), deadID(h.rec.id))
	}
	if err != nil {
		a.log.Warn("could not learn whether an earlier delivery of the task settled it: it is left to be delivered again",
			"task_id", h.rec.id, "error", err)
		return earlierUnknown
	}
	if !copied && !dead {
		return earlierNone
	}
	if err := h.msg.DoubleAck(ctx); err != nil {
		a.log.Warn("acknowledgement of a task settled by an earlier delivery not confirmed: its next delivery tries again",
			"task_id", h.rec.id, "error", err)
	}
	return earlierSettled
}

// singleServer reports whether each of the named streams has one replica,
// as it is configured now rather than as New found it: an operator may add
// replicas to a stream the actor made with one, and a probe sent to a
// replicated stream stops it (see superseded).
func (a *Actor[T]) singleServer(ctx context.Context, streams ...string) (bool, error) {
	for _, name := range streams {
		st, err := a.js.Stream(ctx, name)
		if err != nil {
			return false, err
		}
		if st.CachedInfo().Config.Replicas > 1 {
			return false, nil
		}
	}
	return true, nil
}

// errCodeWrongLastMsgID is the server's refusal of a publish whose
// expected last message ID is not the stream's (JSStreamWrongLastMsgIDErrF),
// which package jetstream names no constant for.
const errCodeWrongLastMsgID jetstream.ErrorCode = 10070

// probeID reports whether the stream of subject holds message ID id
// within its duplicate window, storing nothing (see probeMsg).
func probeID(ctx context.Context, js jetstream.JetStream, subject, id string) (bool, error) {
	ack, err := probeMsg(ctx, js, &nats.Msg{Subject: subject}, id)
	return ack != nil, err
}

// probeMsg publishes m with message ID id, expecting a last message ID
// that no message has, and so stores nothing: the server checks the ID
// first and answers a duplicate with the first store's acknowledgement,
// which probeMsg returns; it refuses any other message for the
// expectation, and probeMsg returns nil. An answer that did not come is
// an error. It must not be sent to a replicated stream (see keyRefused).
func probeMsg(ctx context.Context, js jetstream.JetStream, m *nats.Msg, id string) (*jetstream.PubAck, error) {
	ack, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(id), jetstream.WithExpectLastMsgID("none-"+nuid.Next()))
	switch {
	case err == nil && ack.Duplicate:
		return ack, nil
	case err == nil:
		// Stored after all: no server this package knows does that.
		return nil, fmt.Errorf("jsactor: the probe of message ID %q was stored at %d", id, ack.Sequence)
	case apiCode(err) == errCodeWrongLastMsgID:
		return nil, nil
	}
	return nil, err
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
	e := a.superseded(h)
	if e != earlierSettled {
		// The copy charges the lost run to the task, and the counters
		// count it, as a run of this delivery would have
		// (TestCloseGivesBackLostRunCounted).
		a.countLost(h)
	}
	if e != earlierNone {
		return
	}
	a.gaveBack.Add(1)
	a.copyTo(h, placeReady, a.next(h, false))
}

// deadLetter moves h's task to the dead-letter stream, then acknowledges
// it, as copyTo does a copy. The dead letter's message ID is derived from
// the task's ID, so that a later delivery of the original finds it and
// acknowledges the original instead of running it, and a task
// dead-lettered twice — by two deliveries caught in the window that no
// client can close — is stored once.
//
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
	a.beforeStore(rec.id)
	stored, err := a.store(ctx, m, deadID(rec.id))
	if err != nil {
		a.log.Warn("could not store the dead letter: the task runs again once its lease runs out", "task_id", rec.id, "reason", reason, "error", err)
		return
	}
	if stored {
		// The dead letter ends the task, whether or not the
		// acknowledgement of its original comes through.
		a.counts.add(countDeadLettered, 1)
		h.trace.deadLettered(reason, cause)
	}
	a.ackStored(ctx, h, "dead letter")
}

// deadID is the message ID of the dead letter of the task with ID id: a
// task is dead-lettered once.
func deadID(id uint64) string { return "dead-" + strconv.FormatUint(id, 10) }
