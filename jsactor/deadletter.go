package jsactor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/names"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reason is why a task went to the dead letters.
type Reason uint8

// The reasons, with the names of pgactor's.
const (
	// ReasonMaxAttempts: the task failed Config.MaxAttempts times.
	ReasonMaxAttempts Reason = iota + 1
	// ReasonPermanent: the handler failed with an error marked
	// actor.Permanent.
	ReasonPermanent
	// ReasonLost: the task's workers were lost — killed, frozen or cut off
	// past the lease — more than Config.MaxLost times.
	ReasonLost
	// ReasonUndecodable: the stored payload no longer decodes (see Codec).
	ReasonUndecodable
)

var reasonNames = names.New[Reason]("jsactor", "dead-letter reason", "Reason",
	"max attempts", "permanent error", "lost", "undecodable")

// String returns the reason's name, such as "max attempts".
func (r Reason) String() string { return reasonNames.String(r) }

// MarshalText encodes r as its name.
func (r Reason) MarshalText() ([]byte, error) { return reasonNames.Marshal(r) }

// UnmarshalText decodes a name written by MarshalText.
func (r *Reason) UnmarshalText(text []byte) (err error) {
	*r, err = reasonNames.Unmarshal(text)
	return err
}

// A DeadLetter is a task that will not run again unless replayed, with
// why.
type DeadLetter[T any] struct {
	// ID is the dead letter's own: its sequence in the dead-letter stream,
	// which Replay and DeleteDeadLetters take.
	ID    uint64
	Actor string
	// Task is the task as it last ran: Task.ID is its ID while it lived,
	// Task.Attempt its last attempt. Task.Payload is the zero value when
	// DecodeErr is set.
	Task   actor.Task[T]
	Reason Reason
	// Err is the error of the task's last failed attempt, as its message;
	// nil if no attempt failed.
	Err error
	// Attempts is how many times a handler ran for the task, lost runs
	// included; Lost how many of those runs lost their worker.
	Attempts  int
	Lost      int
	UniqueKey string
	// Started is when its last run began; zero if it never ran.
	Started time.Time
	// Time is when it was dead-lettered.
	Time time.Time
	// Raw is the stored payload, as the codec encoded it.
	Raw []byte
	// DecodeErr is the codec's error when Raw no longer decodes.
	DecodeErr error
}

// A LetterFilter selects dead letters; its zero value selects the first
// hundred.
type LetterFilter struct {
	Reason  Reason // only this reason; 0 for all
	Type    string // only this task type; "" for all
	AfterID uint64 // only IDs above this one, to read page after page
	Limit   int    // at most this many; 0 means 100
}

// DeadLetters returns the dead letters f selects, in the order they were
// stored.
func (a *Actor[T]) DeadLetters(ctx context.Context, f LetterFilter) ([]DeadLetter[T], error) {
	infos, err := readLetters(ctx, a.js, a.l, f, a.typ)
	out := make([]DeadLetter[T], len(infos))
	for i, li := range infos {
		out[i] = a.letter(li)
	}
	return out, err
}

// letter decodes a dead letter's payload.
func (a *Actor[T]) letter(li LetterInfo) DeadLetter[T] {
	d := DeadLetter[T]{
		ID: li.ID, Actor: a.name, Reason: li.Reason, Attempts: li.Attempts, Lost: li.Lost,
		UniqueKey: li.UniqueKey, Started: li.Started, Time: li.Time, Raw: li.Payload,
		Task: actor.Task[T]{ID: li.TaskID, Type: li.Type, Attempt: li.Attempts, Enqueued: li.Enqueued},
	}
	if li.Err != "" {
		d.Err = storedError(li.Err)
	}
	if p, err := a.decode(li.Payload); err != nil {
		d.DecodeErr = err
	} else {
		d.Task.Payload = p
	}
	return d
}

// Replay sends the dead letters with the given IDs again, as new tasks
// with their payloads, types, unique keys and trace headers, and deletes
// them; it returns the new tasks' IDs in order. Each replay's message ID
// is derived from the dead letter's, so a replay repeated — twice at
// once, or after a failure between the send and the delete — stores one
// task as long as it comes within Config.DedupWindow. An ID that no dead
// letter has fails with ErrNoTask.
func (a *Actor[T]) Replay(ctx context.Context, ids ...uint64) ([]uint64, error) {
	return a.admin().Replay(ctx, a.name, ids...)
}

// DeleteDeadLetters deletes the dead letters with the given IDs and
// returns how many there were.
func (a *Actor[T]) DeleteDeadLetters(ctx context.Context, ids ...uint64) (int, error) {
	return a.admin().DeleteDeadLetters(ctx, a.name, ids...)
}

// LetterInfo is a dead letter as stored, its payload encoded.
type LetterInfo struct {
	// ID is the dead letter's own: its sequence in the dead-letter
	// stream. TaskID is the task's ID while it lived.
	ID       uint64
	TaskID   uint64
	Actor    string
	Type     string // "" when the send named none: the payload's Go type
	Reason   Reason
	Err      string // the last failed attempt's error; "" if none failed
	Attempts int    // runs, lost ones included
	Lost     int
	// UniqueKey is the key the task was sent with, which a replay keeps.
	UniqueKey string
	Enqueued  time.Time
	Started   time.Time // when its last run began; zero if it never ran
	Time      time.Time // when it was dead-lettered
	Payload   []byte
}

// DeadLetters returns the named actor's dead letters that f selects, in
// the order they were stored, their payloads encoded.
func (ad *Admin) DeadLetters(ctx context.Context, actor string, f LetterFilter) ([]LetterInfo, error) {
	return readLetters(ctx, ad.js, ad.layout(actor), f, "")
}

// readLetters reads the dead letters of l that f selects; typ is the
// type of a task sent without one, which f.Type may name.
func readLetters(ctx context.Context, js jetstream.JetStream, l layout, f LetterFilter, typ string) ([]LetterInfo, error) {
	if f.Limit < 0 {
		return nil, fmt.Errorf("jsactor: dead letters of %q: Limit %d: must be 0 (a hundred) or more", l.actor, f.Limit)
	}
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	st, err := js.Stream(ctx, l.deadStream())
	if err != nil {
		return nil, unknown(l, fmt.Errorf("dead letters: %w", err))
	}
	var out []LetterInfo
	if f.AfterID == math.MaxUint64 {
		return out, nil // none is past it; AfterID+1 would wrap to the first
	}
	for seq := f.AfterID + 1; len(out) < limit; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(l.deadSubject()))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("jsactor: dead letters of %q: read from %d: %w", l.actor, seq, err)
		}
		seq = m.Sequence + 1
		li := letterInfo(l, m)
		if li.Type == "" {
			li.Type = typ
		}
		if (f.Reason == 0 || li.Reason == f.Reason) && (f.Type == "" || li.Type == f.Type) {
			out = append(out, li)
		}
	}
	return out, nil
}

// letterInfo reads a dead letter from its message.
func letterInfo(l layout, m *jetstream.RawStreamMsg) LetterInfo {
	rec := readRecord(m.Header, 0, time.Time{})
	li := LetterInfo{
		ID: m.Sequence, TaskID: rec.id, Actor: l.actor, Type: rec.typ, Err: rec.lastErr,
		Attempts: headerInt(m.Header, hdrAttempts), Lost: rec.lost, UniqueKey: rec.key,
		Enqueued: rec.enqueued, Started: rec.started, Time: m.Time, Payload: m.Data,
	}
	_ = li.Reason.UnmarshalText([]byte(m.Header.Get(hdrReason)))
	return li
}

// Replay sends the named actor's dead letters with the given IDs again;
// see Actor.Replay.
func (ad *Admin) Replay(ctx context.Context, actor string, ids ...uint64) ([]uint64, error) {
	l := ad.layout(actor)
	dead, err := ad.js.Stream(ctx, l.deadStream())
	if err != nil {
		return nil, unknown(l, fmt.Errorf("replay: %w", err))
	}
	out := make([]uint64, 0, len(ids))
	for _, id := range ids {
		m, err := getMsg(ctx, dead, id)
		if errors.Is(err, jetstream.ErrMsgNotFound) || err == nil && m.Subject != l.deadSubject() {
			return out, fmt.Errorf("jsactor: replay dead letter %d of %q: %w", id, actor, ErrNoTask)
		}
		if err != nil {
			return out, fmt.Errorf("jsactor: replay dead letter %d of %q: %w", id, actor, err)
		}
		key := readText(m.Header.Get(hdrKey))
		h := nats.Header{}
		for _, name := range []string{hdrType, hdrKey} {
			if v := m.Header.Get(name); v != "" {
				h.Set(name, v)
			}
		}
		addTrace(h, traceHeader(m.Header))
		h.Set(hdrReplayOf, strconv.FormatUint(id, 10))
		msg := &nats.Msg{Subject: l.subject(placeReady, keyToken(key)), Header: h, Data: m.Data}
		ack, stored, err := publishTask(ctx, ad.js, msg, replayIDPrefix+l.deadStream()+"-"+strconv.FormatUint(id, 10), l, key, false)
		if err != nil {
			return out, fmt.Errorf("jsactor: replay dead letter %d of %q: %w", id, actor, err)
		}
		if stored {
			addCounts(ctx, ad.js, l, map[counter]uint64{countAccepted: 1, countReplayed: 1})
		}
		if err := deleteMsg(ctx, dead, id); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return append(out, ack.Sequence), fmt.Errorf("jsactor: dead letter %d of %q was replayed as task %d, but not deleted (replaying it again within the dedup window stores nothing): %w", id, actor, ack.Sequence, err)
		}
		out = append(out, ack.Sequence)
	}
	return out, nil
}

// DeleteDeadLetters deletes the named actor's dead letters with the given
// IDs and returns how many there were.
func (ad *Admin) DeleteDeadLetters(ctx context.Context, actor string, ids ...uint64) (int, error) {
	l := ad.layout(actor)
	dead, err := ad.js.Stream(ctx, l.deadStream())
	if err != nil {
		return 0, unknown(l, fmt.Errorf("delete dead letters: %w", err))
	}
	n := 0
	for _, id := range ids {
		err := deleteMsg(ctx, dead, id)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return n, fmt.Errorf("jsactor: delete dead letter %d of %q: %w", id, actor, err)
		default:
			n++
		}
	}
	return n, nil
}

// getMsg reads the message at seq, failing with jetstream.ErrMsgNotFound
// when there is none: at 0, no message is, and the server answers a read
// of it with an error of its own.
func getMsg(ctx context.Context, st jetstream.Stream, seq uint64) (*jetstream.RawStreamMsg, error) {
	if seq == 0 {
		return nil, jetstream.ErrMsgNotFound
	}
	return st.GetMsg(ctx, seq)
}

// deleteMsg deletes the message at seq, failing with
// jetstream.ErrMsgNotFound when there is none: the server answers a
// delete of a missing message with a generic failure, so a failure is
// checked against a read.
func deleteMsg(ctx context.Context, st jetstream.Stream, seq uint64) error {
	if seq == 0 {
		return jetstream.ErrMsgNotFound // no message has it; the server answers a delete of 0 with a failure
	}
	err := st.DeleteMsg(ctx, seq)
	if err == nil || !errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return err
	}
	if _, gerr := st.GetMsg(ctx, seq); errors.Is(gerr, jetstream.ErrMsgNotFound) {
		return jetstream.ErrMsgNotFound
	}
	return err
}
