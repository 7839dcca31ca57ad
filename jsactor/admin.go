package jsactor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// An Admin operates the durable actors under one prefix without knowing
// their payload types: what an operator's tool uses. It lists the actors
// and their live tasks as stored, pauses and resumes them, makes waiting
// tasks due now or deletes them, and reads, replays and deletes dead
// letters. An Actor has the same operations for its own tasks.
type Admin struct {
	js     jetstream.JetStream
	prefix string
	// deleting, when set, runs as Delete is about to delete the message
	// at seq, having found it not yet delivered: a test has a worker
	// take it there.
	deleting func(seq uint64)
}

// NewAdmin returns an Admin of the actors under prefix ("" for
// DefaultPrefix) on the server nc is connected to.
func NewAdmin(nc *nats.Conn, prefix string) (*Admin, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !namePattern.MatchString(prefix) {
		return nil, fmt.Errorf("jsactor: NewAdmin: prefix %q %s", prefix, nameRule)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jsactor: NewAdmin: %w", err)
	}
	return &Admin{js: js, prefix: prefix}, nil
}

// Prefix returns the prefix whose actors the Admin operates.
func (ad *Admin) Prefix() string { return ad.prefix }

// ActorInfo describes one actor.
type ActorInfo struct {
	Name  string
	Stats Stats // Workers, Busy and Idle are zero: they are each process's
}

// Actors returns the actors under the Admin's prefix, in order of name,
// with their stats.
func (ad *Admin) Actors(ctx context.Context) ([]ActorInfo, error) {
	var names []string
	streams := ad.js.ListStreams(ctx, jetstream.WithStreamListSubject(ad.prefix+".*.r.*"))
	for info := range streams.Info() {
		// The actor's name is in its ready subject, not parsed from the
		// stream's name, which other names could share.
		for _, subj := range info.Config.Subjects {
			base, ok := strings.CutSuffix(subj, ".r.*")
			name, ok2 := strings.CutPrefix(base, ad.prefix+".")
			if ok && ok2 && namePattern.MatchString(name) && info.Config.Name == (layout{ad.prefix, name}).workStream() {
				names = append(names, name)
			}
		}
	}
	if err := streams.Err(); err != nil {
		return nil, fmt.Errorf("jsactor: actors under %q: %w", ad.prefix, err)
	}
	slices.Sort(names)
	out := make([]ActorInfo, 0, len(names))
	for _, name := range names {
		s, err := ad.Stats(ctx, name)
		if err != nil {
			return out, err
		}
		out = append(out, ActorInfo{Name: name, Stats: s})
	}
	return out, nil
}

// Stats reads the counters and gauges of the named actor.
func (ad *Admin) Stats(ctx context.Context, actor string) (Stats, error) {
	return readStats(ctx, ad.js, ad.layout(actor))
}

// Pause stops every process from taking the named actor's tasks until
// Resume; see Actor.Pause.
func (ad *Admin) Pause(ctx context.Context, actor string) error {
	return pause(ctx, ad.js, ad.layout(actor))
}

// Resume lets the named actor's tasks be taken again after Pause.
func (ad *Admin) Resume(ctx context.Context, actor string) error {
	return resume(ctx, ad.js, ad.layout(actor))
}

func (ad *Admin) layout(actor string) layout { return layout{prefix: ad.prefix, actor: actor} }

// A TaskState is where a live task is, as an operator sees it.
type TaskState string

// The states of live tasks.
const (
	TaskQueued    TaskState = "queued"    // ready, not yet delivered
	TaskRunning   TaskState = "running"   // delivered to a worker, or to one that was lost, not yet acknowledged
	TaskScheduled TaskState = "scheduled" // sent to run later, or snoozed
	TaskRetrying  TaskState = "retrying"  // waiting for its backoff
)

// TaskInfo is a live task as stored, its payload encoded.
type TaskInfo struct {
	// Seq is the sequence of the message that holds the task now, which
	// RunNow and Delete take: a task moves to a new message each time it
	// is retried, given back, snoozed or comes due.
	Seq uint64
	// ID is the task's ID, which stays the same across those moves.
	ID        uint64
	Actor     string
	State     TaskState
	Type      string // "" when the send named none: the payload's Go type
	UniqueKey string
	// Attempts is how many times the task has run, lost runs included;
	// Lost how many of those lost their worker.
	Attempts int
	Lost     int
	Enqueued time.Time
	// Due is when a scheduled or retrying task comes due; zero otherwise.
	Due time.Time
	// LastError is the error of its last failed attempt, if any.
	LastError string
	Payload   []byte
}

// A TaskFilter selects live tasks; its zero value selects the first
// hundred of every state.
type TaskFilter struct {
	States []TaskState // only these states; none for all
	After  uint64      // only messages past this Seq, to read page after page
	Limit  int         // at most this many; 0 means 100, at most 1000
}

// Tasks returns the named actor's live tasks that f selects, in the order
// they were stored, and the Seq to pass as f.After for the next page, 0 on
// the last. States are read at one moment each: a task can move while the
// page is read.
func (ad *Admin) Tasks(ctx context.Context, actor string, f TaskFilter) ([]TaskInfo, uint64, error) {
	l := ad.layout(actor)
	limit := f.Limit
	switch {
	case limit < 0 || limit > 1000:
		return nil, 0, fmt.Errorf("jsactor: tasks of %q: Limit %d: must be between 0 (a hundred) and 1000", actor, limit)
	case limit == 0:
		limit = 100
	}
	for _, s := range f.States {
		if !slices.Contains([]TaskState{TaskQueued, TaskRunning, TaskScheduled, TaskRetrying}, s) {
			return nil, 0, fmt.Errorf("jsactor: tasks of %q: unknown state %q: want queued, running, scheduled or retrying", actor, s)
		}
	}
	st, delivered, err := ad.workState(ctx, l)
	if err != nil {
		return nil, 0, err
	}
	var out []TaskInfo
	if f.After == math.MaxUint64 {
		return out, 0, nil // none is past it; After+1 would wrap to the first
	}
	for seq := f.After + 1; ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(l.base()+".*.*"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, 0, nil
		}
		if err != nil {
			return out, 0, fmt.Errorf("jsactor: tasks of %q: read from %d: %w", actor, seq, err)
		}
		seq = m.Sequence + 1
		t := taskInfo(l, m, delivered)
		if len(f.States) > 0 && !slices.Contains(f.States, t.State) {
			continue
		}
		out = append(out, t)
		if len(out) == limit {
			return out, m.Sequence, nil
		}
	}
}

// workState returns the actor's work stream and the last stream sequence
// its run consumer delivered: a ready message at or below it is running.
func (ad *Admin) workState(ctx context.Context, l layout) (jetstream.Stream, uint64, error) {
	st, err := ad.js.Stream(ctx, l.workStream())
	if err != nil {
		return nil, 0, unknown(l, err)
	}
	delivered, err := runDelivered(ctx, st)
	if err != nil {
		return nil, 0, unknown(l, err)
	}
	return st, delivered, nil
}

// runDelivered returns the last stream sequence that the run consumer of
// the work stream st delivered.
func runDelivered(ctx context.Context, st jetstream.Stream) (uint64, error) {
	c, err := st.Consumer(ctx, consumerRun)
	if err != nil {
		return 0, err
	}
	return c.CachedInfo().Delivered.Stream, nil
}

// taskInfo reads a live task from its message.
func taskInfo(l layout, m *jetstream.RawStreamMsg, delivered uint64) TaskInfo {
	rec := readRecord(m.Header, m.Sequence, m.Time)
	t := TaskInfo{
		Seq: m.Sequence, ID: rec.id, Actor: l.actor, Type: rec.typ, UniqueKey: rec.key,
		Attempts: rec.charged, Lost: rec.lost, Enqueued: rec.enqueued, Due: rec.due,
		LastError: rec.lastErr, Payload: m.Data,
	}
	switch place := placeOf(l, m.Subject); {
	case place == placeDelayed:
		t.State = TaskScheduled
	case place == placeBackoff:
		t.State = TaskRetrying
	case m.Sequence <= delivered:
		t.State = TaskRunning
	default:
		t.State = TaskQueued
	}
	return t
}

// placeOf returns the place token of a task's subject.
func placeOf(l layout, subject string) string {
	rest, _ := strings.CutPrefix(subject, l.base()+".")
	place, _, _ := strings.Cut(rest, ".")
	return place
}

// RunNow makes the named actor's scheduled and retrying tasks with the
// given Seqs due now: each moves to the end of the ready tasks, its
// counts kept. It returns the Seqs it moved; a Seq of a queued or running
// task, or of none, is left alone.
func (ad *Admin) RunNow(ctx context.Context, actor string, seqs ...uint64) ([]uint64, error) {
	l := ad.layout(actor)
	st, _, err := ad.workState(ctx, l)
	if err != nil {
		return nil, err
	}
	var moved []uint64
	for _, seq := range seqs {
		m, err := getMsg(ctx, st, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return moved, fmt.Errorf("jsactor: run task %d of %q now: %w", seq, actor, err)
		}
		if p := placeOf(l, m.Subject); p != placeDelayed && p != placeBackoff {
			continue
		}
		rec := readRecord(m.Header, m.Sequence, m.Time)
		rec.due = time.Time{}
		rec.gen++
		copyMsg := &nats.Msg{Subject: l.subject(placeReady, keyToken(rec.key)), Header: rec.header(), Data: m.Data}
		// The copy's message ID is the one the delayed consumer would give
		// it, so a task that comes due meanwhile is stored once.
		if _, err := ad.js.PublishMsg(ctx, copyMsg, jetstream.WithMsgID(copyID(&rec))); err != nil {
			return moved, fmt.Errorf("jsactor: run task %d of %q now: %w", seq, actor, err)
		}
		if err := deleteMsg(ctx, st, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return moved, fmt.Errorf("jsactor: run task %d of %q now: the task was made due, but its waiting message not deleted: %w", seq, actor, err)
		}
		moved = append(moved, seq)
	}
	return moved, nil
}

// Delete deletes the named actor's queued, scheduled and retrying tasks
// with the given Seqs, and returns the Seqs it deleted. A running task is
// left alone — its handler runs on regardless — as is a Seq of none. A
// deleted task is gone: it is neither completed nor dead-lettered.
//
// JetStream cannot delete a message only if no worker has taken it, so a
// queued task that a worker takes as Delete deletes it loses its message
// under its handler: the handler runs on, and the task ends as its result
// says — completed, retried or dead-lettered — but is not run again if
// its worker is lost. Likewise a scheduled or retrying task that comes
// due as Delete deletes it may have been copied to the ready tasks
// already, and runs. Delete cannot tell such a task from one the workers
// reached only after it was deleted, nor a task due from one whose copy
// was never made: it leaves them out of the Seqs it returns, and its
// error wraps ErrMaybeRunning and names them, even when Delete fails on
// another Seq.
func (ad *Admin) Delete(ctx context.Context, actor string, seqs ...uint64) ([]uint64, error) {
	l := ad.layout(actor)
	st, delivered, err := ad.workState(ctx, l)
	if err != nil {
		return nil, err
	}
	var deleted, maybe []uint64
	for _, seq := range seqs {
		m, err := getMsg(ctx, st, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return deleted, maybeRunning(actor, maybe, fmt.Errorf("jsactor: delete task %d of %q: %w", seq, actor, err))
		}
		if taskInfo(l, m, delivered).State == TaskRunning {
			continue
		}
		if ad.deleting != nil {
			ad.deleting(seq)
		}
		if err := deleteMsg(ctx, st, seq); errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		} else if err != nil {
			return deleted, maybeRunning(actor, maybe, fmt.Errorf("jsactor: delete task %d of %q: %w", seq, actor, err))
		}
		if placeOf(l, m.Subject) == placeReady {
			// The run consumer may have delivered the message since
			// delivered was read (TestAdminDeleteRacesDelivery). Once it
			// is deleted, the consumer passes it by, so a delivered
			// sequence short of it proves that no worker took it.
			if delivered, err = runDelivered(ctx, st); err != nil {
				maybe = append(maybe, seq)
				return deleted, maybeRunning(actor, maybe, fmt.Errorf("jsactor: delete task %d of %q: deleted, but whether a worker took it first is not known: %w", seq, actor, err))
			}
			if seq <= delivered {
				maybe = append(maybe, seq)
				continue
			}
		} else if !readRecord(m.Header, m.Sequence, m.Time).due.After(time.Now().Add(early + dueSlack)) {
			// The timer that holds a waiting message copies it to the
			// ready tasks once it is due, then acknowledges it: it may
			// hold it now, its copy made or about to be
			// (TestAdminDeleteRacesDue).
			maybe = append(maybe, seq)
			continue
		}
		deleted = append(deleted, seq)
	}
	return deleted, maybeRunning(actor, maybe, nil)
}

// dueSlack is how much sooner than its due time, by the clock of the
// process that deletes it, Delete takes a scheduled or retrying task to
// be moving to the ready tasks: the timers of other processes read their
// own clocks, which may be ahead.
const dueSlack = time.Second

// maybeRunning returns err joined, when maybe holds any Seqs, with the
// error that names them as tasks whose messages Delete deleted but whose
// handlers may run.
func maybeRunning(actor string, maybe []uint64, err error) error {
	if len(maybe) == 0 {
		return err
	}
	return errors.Join(err, fmt.Errorf("jsactor: delete tasks %v of %q: %w: their messages are deleted, but their handlers may run", maybe, actor, ErrMaybeRunning))
}

// unknown wraps the error of a lookup of an actor's stream or consumer,
// marking a missing one as ErrUnknownActor.
func unknown(l layout, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("jsactor: actor %q: %w under prefix %q: %w", l.actor, ErrUnknownActor, l.prefix, err)
	}
	return fmt.Errorf("jsactor: actor %q: %w", l.actor, err)
}
