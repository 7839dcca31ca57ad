package jsactor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// A SendOption sets a property of the task being sent.
type SendOption func(*sendOptions)

type sendOptions struct {
	runAt    time.Time
	after    time.Duration
	key      string
	typ      string
	msgID    string
	priority bool
	trace    nats.Header // a Tracer's headers for each task (trace.go)
}

// RunAt makes the task due at t rather than now. It waits on the delayed
// subject, held by no worker, and joins the end of the ready tasks once
// due: a few milliseconds after t, later when many come due at once.
func RunAt(t time.Time) SendOption { return func(o *sendOptions) { o.runAt = t } }

// After makes the task due d from now.
func After(d time.Duration) SendOption { return func(o *sendOptions) { o.after = d } }

// UniqueKey refuses the send, with a [*DuplicateError], while a live task
// of the actor — ready, delayed, running or waiting for a retry — has the
// same key. Once that task completes or is dead-lettered, the key is free.
// The server checks it when it stores the message, so two processes
// sending the same key at once store one task.
func UniqueKey(key string) SendOption { return func(o *sendOptions) { o.key = key } }

// WithType names the kind of work a task is, such as "sendInvoice"; the
// name appears in logs, errors and dead letters. Without it a task's type
// is the Go type of its payload.
func WithType(name string) SendOption { return func(o *sendOptions) { o.typ = name } }

// MsgID sets the message ID the server deduplicates the send by: a second
// send with the same ID within Config.DedupWindow is not stored again, and
// returns the first one's task ID. Without it each Send has an ID of its
// own, which covers only Send's own retries. With SendBatch, each task's
// ID is id followed by "/" and its index. An id that begins as the
// actor's own message IDs do ("c-", "replay-") is kept apart from them.
func MsgID(id string) SendOption { return func(o *sendOptions) { o.msgID = id } }

// Priority is refused with [ErrPriority]: JetStream has no per-message
// priority. It exists so that code moved from pgactor fails with an error
// that says so, rather than to compile differently.
func Priority(p int16) SendOption { return func(o *sendOptions) { o.priority = true } }

// Send stores a task with payload and returns its ID once the stream has
// acknowledged it. A publish whose acknowledgement does not come in time is
// sent again with the same message ID until ctx ends, so that a lost
// acknowledgement does not store the task twice. A task must leave 6 KiB
// below the server's max_payload (1 MiB by default), for the headers its
// retries and its dead letter add: Send refuses a larger one with an
// error that wraps nats.ErrMaxPayload.
func (a *Actor[T]) Send(ctx context.Context, payload T, opts ...SendOption) (uint64, error) {
	ids, err := a.send(ctx, []T{payload}, opts, false)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// SendBatch stores a task for each payload, published together, and
// returns their IDs in order. It is not atomic: on an error, the IDs of
// the tasks stored are set and the others are 0, and the error joins each
// failure. Sending the same batch again with MsgID stores only the ones
// missing.
func (a *Actor[T]) SendBatch(ctx context.Context, payloads []T, opts ...SendOption) ([]uint64, error) {
	return a.send(ctx, payloads, opts, true)
}

func (a *Actor[T]) send(ctx context.Context, payloads []T, opts []SendOption, batch bool) ([]uint64, error) {
	var o sendOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.priority {
		return nil, fmt.Errorf("jsactor: send to %q: %w", a.name, ErrPriority)
	}
	if o.key != "" && len(payloads) > 1 {
		return nil, fmt.Errorf("jsactor: send to %q: UniqueKey with a batch of %d tasks: a key names one task", a.name, len(payloads))
	}
	defer a.flushAfterClose()
	if a.tracer != nil && len(payloads) > 0 { // an empty batch sends nothing to trace
		return a.traceSend(ctx, payloads, &o, batch)
	}
	return a.publishTasks(ctx, payloads, &o, batch)
}

// publishTasks stores a task for each payload, as o describes them.
func (a *Actor[T]) publishTasks(ctx context.Context, payloads []T, o *sendOptions, batch bool) ([]uint64, error) {
	if ctx.Err() != nil {
		// A batch is published before its acknowledgements are awaited:
		// with a context already ended it would be stored, and reported
		// as not stored. Checked here, inside a Tracer's send, so that
		// the send's trace ends with the error as any other failed send's
		// does.
		return make([]uint64, len(payloads)), fmt.Errorf("jsactor: send to %q: nothing stored: %w", a.name, context.Cause(ctx))
	}
	msgs := make([]*nats.Msg, len(payloads))
	ids := make([]string, len(payloads))
	now := time.Now()
	due := o.runAt
	if o.after > 0 {
		due = now.Add(o.after)
	}
	place := placeReady
	if due.After(now) {
		place = placeDelayed
	}
	tok := keyToken(o.key)
	base := sendID(o.msgID)
	if base == "" {
		base = nuid.Next()
	}
	for i, p := range payloads {
		data, err := a.codec.Encode(p)
		if err != nil {
			return nil, &EncodeError{Actor: a.name, Err: err}
		}
		h := nats.Header{}
		addTrace(h, o.trace)
		if o.typ != "" {
			h.Set(hdrType, headerText(o.typ))
		}
		if o.key != "" {
			h.Set(hdrKey, headerText(o.key))
		}
		if place == placeDelayed {
			h.Set(hdrDue, dueText(due))
		}
		msgs[i] = &nats.Msg{Subject: a.l.subject(place, tok), Header: h, Data: data}
		ids[i] = base
		if batch {
			ids[i] = base + "/" + strconv.Itoa(i)
		}
		if err := a.checkSize(msgs[i], ids[i], i, batch); err != nil {
			return make([]uint64, len(payloads)), err
		}
	}
	out := make([]uint64, len(payloads))
	var errs []error
	if len(msgs) == 1 {
		seq, err := a.publish(ctx, msgs[0], ids[0], o.key, false)
		if err != nil {
			return out, err
		}
		out[0] = seq
		return out, nil
	}
	for lo := 0; lo < len(msgs); lo += asyncWindow {
		hi := min(lo+asyncWindow, len(msgs))
		errs = append(errs, a.publishAsync(ctx, msgs[lo:hi], ids[lo:hi], out[lo:hi], lo)...)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("jsactor: send to %q: %d of %d tasks not stored: %w", a.name, len(errs), len(msgs), errors.Join(errs...))
	}
	return out, nil
}

// copyRoom is the room a task keeps below the server's max_payload for
// the headers that its copies — a retry, a give-back, a snooze, a task
// come due — and its dead letter add to those of its send: the last error,
// up to maxErrorLen bytes that quoting can make four times as long, and
// the counts, times, reason and message ID.
const copyRoom = 4*maxErrorLen + 2048

// checkSize refuses a task whose message, id its message ID, leaves less
// than copyRoom below the server's max_payload: it would be stored, but
// neither its retry nor its dead letter could be, and it would run again
// forever as a lost run. i is its index in a batch.
func (a *Actor[T]) checkSize(m *nats.Msg, id string, i int, batch bool) error {
	limit := a.nc.MaxPayload()
	if limit <= 0 {
		return nil // not known before the first connect; the server checks
	}
	size := len(m.Data) + len(nats.MsgIdHdr) + len(id) + 4 + len("NATS/1.0\r\n\r\n")
	for k, vs := range m.Header {
		for _, v := range vs {
			size += len(k) + len(v) + 4
		}
	}
	if int64(size+copyRoom) <= limit {
		return nil
	}
	what := "the task"
	if batch {
		what = "task " + strconv.Itoa(i) + " of the batch"
	}
	return fmt.Errorf("jsactor: send to %q: %s is %d bytes with its headers, %d bytes of payload: at most %d fit, the server's max_payload (%d) less %d kept for the headers of its retries and dead letter: %w",
		a.name, what, size, len(m.Data), limit-copyRoom, limit, copyRoom, nats.ErrMaxPayload)
}

// asyncWindow is how many publishes of a batch are in flight at once,
// below the client's own limit on outstanding asynchronous publishes.
const asyncWindow = 1000

// publishAsync publishes msgs at once and waits for their
// acknowledgements, setting out's IDs; a publish that fails is tried
// again alone, with the same message ID. first is msgs[0]'s index in the
// batch, for the errors.
func (a *Actor[T]) publishAsync(ctx context.Context, msgs []*nats.Msg, ids []string, out []uint64, first int) []error {
	var errs []error
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		f, err := a.js.PublishMsgAsync(m, jetstream.WithMsgID(ids[i]))
		if err != nil {
			errs = append(errs, fmt.Errorf("task %d of the batch: %w", first+i, err))
			continue
		}
		futures[i] = f
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		var ack *jetstream.PubAck
		var err error
		// An answer that has come is taken before an ended ctx, which a
		// select would pick as often, reporting a stored task as not
		// stored and counting it nowhere (TestSendBatchEndedAfterAcks).
		select {
		case ack = <-f.Ok():
		case err = <-f.Err():
		default:
			select {
			case ack = <-f.Ok():
			case err = <-f.Err():
			case <-ctx.Done():
				errs = append(errs, fmt.Errorf("task %d of the batch: not acknowledged: %w", first+i, context.Cause(ctx)))
				continue
			}
		}
		if err != nil {
			seq, err2 := a.publish(ctx, msgs[i], ids[i], "", retryable(err))
			if err2 != nil {
				errs = append(errs, fmt.Errorf("task %d of the batch: %w (first try: %v)", first+i, err2, err))
				continue
			}
			out[i] = seq
			continue
		}
		out[i] = ack.Sequence
		if !ack.Duplicate {
			a.counts.add(countAccepted, 1)
		}
	}
	return errs
}

// publish stores m with message ID id, counting it as accepted when this
// call stored it; see publishTask. It returns the task's ID.
func (a *Actor[T]) publish(ctx context.Context, m *nats.Msg, id, key string, tried bool) (uint64, error) {
	ack, stored, err := publishTask(ctx, a.js, m, id, a.l, key, tried)
	if err != nil {
		return 0, err
	}
	if stored {
		a.counts.add(countAccepted, 1)
	}
	return ack.Sequence, nil
}

// publishTask stores m, a task of the actor l names, with message ID id,
// sending it again while its acknowledgement does not come and ctx
// lasts. With a unique key, the server refuses it while a live task has
// the key. tried says that a try before this call's, whose answer did not
// come, may have stored m (a batch's asynchronous publish). It reports
// whether this call stored m: the server did not know the ID, or knew it
// only after a try whose answer did not come — the store whose
// acknowledgement was lost, counted nowhere else. A send repeated by
// another call at that moment is then counted twice, as counters are
// under faults (see flush).
func publishTask(ctx context.Context, js jetstream.JetStream, m *nats.Msg, id string, l layout, key string, tried bool) (*jetstream.PubAck, bool, error) {
	opts := []jetstream.PublishOpt{jetstream.WithMsgID(id)}
	if key != "" {
		opts = append(opts, jetstream.WithExpectLastSequenceForSubject(0, l.keyed(keyToken(key))))
	}
	wait := 50 * time.Millisecond
	for {
		// A try waits two seconds for its acknowledgement, not the
		// client's five: in a cluster, a publish caught by its stream's
		// election is answered by no one, and the next try, to the new
		// leader, succeeds within milliseconds.
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		ack, err := js.PublishMsg(try, m, opts...)
		cancel()
		if err == nil {
			return ack, !ack.Duplicate || tried, nil
		}
		if apiCode(err) == jetstream.JSErrCodeStreamWrongLastSequence {
			ack, err2 := keyRefused(ctx, js, m, id, l)
			if err2 == nil {
				if ack != nil {
					return ack, tried, nil
				}
				return nil, false, &DuplicateError{Actor: l.actor, Key: key}
			}
			err = err2 // not known yet: send it again
		} else if retryable(err) {
			tried = true // sent, maybe stored, its answer lost
		}
		// A replicated stream refuses a send with this answer while
		// another send of the key is being stored (proposed, not yet
		// applied): not this one, whose message ID the server checked
		// first, but one whose outcome is not known yet. The next try
		// finds it stored, and is refused for the key, or not.
		if !retryable(err) && apiCode(err) != jetstream.JSErrCodeStreamWrongLastSequenceConstant || ctx.Err() != nil {
			return nil, false, fmt.Errorf("jsactor: send to %q: %w", l.actor, err)
		}
		select {
		case <-ctx.Done():
			return nil, false, fmt.Errorf("jsactor: send to %q: %w (last try: %v)", l.actor, context.Cause(ctx), err)
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

// keyRefused learns, for a send of m with message ID id that the work
// stream of l refused for its unique key, whether the send repeats one
// stored before: it returns the acknowledgement of m's first store, nil
// when another task holds the key, or an error when that cannot be known
// yet.
//
// Only a single server needs asking: a replicated stream's leader checks
// a send's message ID — among those stored within the duplicate window
// and those still being stored — before it checks the key, and answers a
// repeated send as a duplicate. Nor may a replicated stream be asked: its
// leader proposes storedBefore's probe to the replicas without checking
// its expected last message ID, and each replica, refusing the probe as
// it applies it, takes the refusal for a failed write and stops the
// stream (nats-server 2.15: "critical write error: last msgid
// mismatch"); no send is stored after it, and sends time out
// (TestClusterUniqueKeyRefused). So the stream's replicas are read first,
// from its current configuration, since an operator may add replicas to a
// stream the actor made with one.
func keyRefused(ctx context.Context, js jetstream.JetStream, m *nats.Msg, id string, l layout) (*jetstream.PubAck, error) {
	try, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := js.Stream(try, l.workStream())
	if err != nil {
		// Probing a stream that may be replicated could stop it, and
		// refusing the send could refuse its own repeat.
		return nil, err
	}
	if st.CachedInfo().Config.Replicas > 1 {
		return nil, nil
	}
	return storedBefore(ctx, js, m, id)
}

// storedBefore returns the acknowledgement of m's first store when the
// server holds its message ID id within the duplicate window, nil when it
// does not, or an error when the server's answer did not come: a send
// answered as a duplicate then might have been its own repeat. A
// single server checks a send's unique key before its message ID: a send
// repeated with its message ID — Send's own retry after a lost
// acknowledgement, a MsgID sent again, a Replay repeated — is refused for
// the key its first store holds, rather than answered as a duplicate. So
// m is sent again without the key's expectation, expecting a last message
// ID that no message has: the server answers a duplicate with the first
// store's sequence, and refuses, storing nothing, anything else. It must
// not be sent to a replicated stream (see keyRefused).
func storedBefore(ctx context.Context, js jetstream.JetStream, m *nats.Msg, id string) (*jetstream.PubAck, error) {
	h := nats.Header{}
	for k, v := range m.Header {
		if k != jetstream.ExpectedLastSubjSeqHeader && k != jetstream.ExpectedLastSubjSeqSubjHeader {
			h[k] = v
		}
	}
	try, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return probeMsg(try, js, &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data}, id)
}

// retryable reports whether a publish may have failed only on its way:
// sending it again with the same ID is safe and may succeed.
func retryable(err error) bool {
	switch {
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrBadSubject), errors.Is(err, nats.ErrMaxPayload):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, nats.ErrDisconnected):
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503: no leader yet for the stream, during an election.
		// errCodeMsgIDInProcess: an earlier try with the same message ID
		// is still being stored on a replicated stream, and once it is
		// the server answers the next try as its duplicate.
		return apiErr.Code == 503 || apiErr.ErrorCode == jetstream.JSErrCodeJetStreamNotEnabled || apiErr.ErrorCode == errCodeMsgIDInProcess
	}
	return false
}

// errCodeMsgIDInProcess is a replicated stream's refusal of a publish
// whose message ID another publish is storing, not yet stored
// (JSStreamDuplicateMessageConflictErr, "duplicate message id is in
// process"), which package jetstream names no constant for.
const errCodeMsgIDInProcess jetstream.ErrorCode = 10158
