// Package jsconsole adapts jsactor.Admin, the operator's view of durable
// actors on NATS JetStream, to the web console of package console, which
// thus needs no NATS client of its own.
//
// jsactor keeps each actor's tasks apart: its live tasks are messages of
// its work stream, named by their sequence (a Seq, which changes as the
// task is retried or comes due), and its dead letters messages of its
// dead-letter stream, named by their own ID. A console.TaskKey here
// always names the actor, and says which of the two its ID is: "mail:42"
// is the live task at Seq 42 of actor mail, "mail:dead:7" its dead letter
// 7. The console lists an actor's live tasks, then its dead letters, and
// the actors in order of name.
//
// jsactor has no canceling state, and no Cancel of a running task; the
// console offers neither. It does not keep when an actor was paused.
package jsconsole

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/actorpool/actorpool/cmd/actorpool/internal/console"
	"github.com/actorpool/actorpool/jsactor"
)

// New returns the console's Admin over a.
func New(a *jsactor.Admin) console.Admin { return admin{a} }

type admin struct{ a *jsactor.Admin }

// states are the states the console offers, in the order it offers them.
var states = []console.TaskState{console.TaskQueued, console.TaskScheduled, console.TaskRetrying, console.TaskRunning, console.TaskDead}

// batch is how many tasks each read of a stream asks for, at least: the
// console's own filters (key, times) are applied to what jsactor returns.
const batch = 100

func (ad admin) Backend() console.Backend {
	return console.Backend{Scope: "prefix", Name: ad.a.Prefix(), Package: "jsactor", States: states}
}

// jsErr marks jsactor's errors of an actor or task that is not there.
func jsErr(err error) error {
	if errors.Is(err, jsactor.ErrUnknownActor) || errors.Is(err, jsactor.ErrNoTask) {
		return console.NotFound(err)
	}
	return err
}

func (ad admin) Actors(ctx context.Context) ([]console.ActorInfo, error) {
	actors, err := ad.a.Actors(ctx)
	out := make([]console.ActorInfo, len(actors))
	for i, a := range actors {
		s := a.Stats
		out[i] = console.ActorInfo{Name: a.Name, Paused: s.Paused, Stats: console.Stats{
			Accepted: s.Accepted, Completed: s.Completed, DeadLettered: s.DeadLettered, Failed: s.Failed,
			Retried: s.Retried, Lost: s.Lost, Replayed: s.Replayed,
			Queued: s.Queued, Scheduled: s.Scheduled, Retrying: s.Retrying, Running: s.Running,
			DeadLetters: s.DeadLetters, OldestQueued: s.OldestQueued,
		}}
	}
	return out, jsErr(err)
}

// checkKey returns why k cannot name a task on JetStream, if it cannot.
func (ad admin) checkKey(k console.TaskKey) error {
	if k.ID == 0 {
		return console.NotFound(fmt.Errorf("task %s: %w: an id is 1 or more", k, jsactor.ErrNoTask))
	}
	if k.Actor == "" {
		return console.NotFound(fmt.Errorf("task %s: %w: tasks on JetStream are named with their actor, as mail:%d for a live one or mail:dead:%d for a dead letter", k, jsactor.ErrNoTask, k.ID, k.ID))
	}
	return ad.checkActor(k.Actor)
}

// checkActor returns, marked NotFound, that no actor can have name when
// jsactor refuses it: the name would make an invalid stream name, which
// NATS reports as an error of its own, not as a missing stream.
func (ad admin) checkActor(name string) error {
	// An actor's name and a prefix follow jsactor's one rule, which
	// Config checks for a prefix.
	if err := (jsactor.Config[struct{}]{Prefix: name}).Validate(); err != nil {
		return console.NotFound(fmt.Errorf("jsactor: actor %q: %w under prefix %q: an actor's name is 1 to 64 letters, digits, '-' and '_'", name, jsactor.ErrUnknownActor, ad.a.Prefix()))
	}
	return nil
}

func liveTask(t jsactor.TaskInfo) console.TaskInfo {
	return console.TaskInfo{
		Ref: console.TaskKey{Actor: t.Actor, ID: t.Seq}, ID: t.ID, Actor: t.Actor, State: console.TaskState(t.State),
		Type: t.Type, Key: t.UniqueKey, Enqueued: t.Enqueued, RunAt: t.Due, Attempt: t.Attempts, Runs: t.Attempts,
		Lost: t.Lost, LastError: t.LastError, Payload: t.Payload,
	}
}

func deadTask(l jsactor.LetterInfo) console.TaskInfo {
	return console.TaskInfo{
		Ref: console.TaskKey{Actor: l.Actor, Dead: true, ID: l.ID}, ID: l.TaskID, Actor: l.Actor, State: console.TaskDead,
		Reason: l.Reason.String(), Type: l.Type, Key: l.UniqueKey, Enqueued: l.Enqueued, Started: l.Started,
		Attempt: l.Attempts, Runs: l.Attempts, Lost: l.Lost, LastError: l.Err, DeadAt: l.Time, Payload: l.Payload,
	}
}

func (ad admin) Task(ctx context.Context, key console.TaskKey) (console.TaskInfo, error) {
	if err := ad.checkKey(key); err != nil {
		return console.TaskInfo{}, err
	}
	missing := console.NotFound(fmt.Errorf("task %s: %w", key, jsactor.ErrNoTask))
	if key.Dead {
		ls, err := ad.a.DeadLetters(ctx, key.Actor, jsactor.LetterFilter{AfterID: key.ID - 1, Limit: 1})
		switch {
		case err != nil:
			return console.TaskInfo{}, jsErr(err)
		case len(ls) == 0 || ls[0].ID != key.ID:
			return console.TaskInfo{}, missing
		}
		return deadTask(ls[0]), nil
	}
	ts, _, err := ad.a.Tasks(ctx, key.Actor, jsactor.TaskFilter{After: key.ID - 1, Limit: 1})
	switch {
	case err != nil:
		return console.TaskInfo{}, jsErr(err)
	case len(ts) == 0 || ts[0].Seq != key.ID:
		return console.TaskInfo{}, missing
	}
	return liveTask(ts[0]), nil
}

// Tasks reads the actors in order of name from f.After's on, each one's
// live tasks and then its dead letters, until it has a page.
func (ad admin) Tasks(ctx context.Context, f console.TaskFilter) (console.TaskPage, error) {
	if f.Limit < 1 {
		return console.TaskPage{}, fmt.Errorf("tasks: Limit %d: want 1 or more", f.Limit)
	}
	if !f.After.IsZero() {
		if err := ad.checkKey(f.After); err != nil {
			return console.TaskPage{}, err
		}
	}
	names := []string{f.Actor}
	if f.Actor == "" {
		actors, err := ad.a.Actors(ctx)
		if err != nil {
			return console.TaskPage{}, jsErr(err)
		}
		names = names[:0]
		for _, a := range actors {
			// An actor before the cursor's was listed on an earlier page.
			if a.Name >= f.After.Actor {
				names = append(names, a.Name)
			}
		}
	}
	var live []jsactor.TaskState
	wantLive, wantDead := len(f.States) == 0, len(f.States) == 0
	for _, s := range f.States {
		if s == console.TaskDead {
			wantDead = true
		} else {
			live, wantLive = append(live, jsactor.TaskState(s)), true
		}
	}
	p := pager{f: f, want: f.Limit + 1}
	for _, name := range names {
		from := f.After
		if from.Actor != name {
			from = console.TaskKey{}
		}
		var err error
		if wantLive && !from.Dead {
			err = p.live(ctx, ad.a, name, live, from.ID)
			from.ID = 0
		}
		if err == nil && wantDead {
			err = p.dead(ctx, ad.a, name, from.ID)
		}
		// An actor deleted since it was listed has no tasks to list.
		if err != nil && (f.Actor != "" || !errors.Is(err, jsactor.ErrUnknownActor)) {
			return console.TaskPage{}, jsErr(err)
		}
		if p.full() {
			break
		}
	}
	page := console.TaskPage{Tasks: p.out}
	if len(p.out) > f.Limit {
		page.Tasks = p.out[:f.Limit]
		page.Next = page.Tasks[f.Limit-1].Ref
	}
	return page, nil
}

// A pager gathers the tasks a filter selects until it has want of them.
type pager struct {
	f    console.TaskFilter
	want int
	out  []console.TaskInfo
}

func (p *pager) full() bool { return len(p.out) >= p.want }

// add keeps t if the filter's own conditions select it.
func (p *pager) add(t console.TaskInfo) {
	switch {
	case p.full(),
		p.f.Key != "" && t.Key != p.f.Key,
		!p.f.Since.IsZero() && t.Enqueued.Before(p.f.Since),
		!p.f.Until.IsZero() && !t.Enqueued.Before(p.f.Until):
		return
	}
	p.out = append(p.out, t)
}

// live adds the actor's live tasks in states (all for none) past Seq
// after.
func (p *pager) live(ctx context.Context, a *jsactor.Admin, actor string, states []jsactor.TaskState, after uint64) error {
	for !p.full() {
		ts, next, err := a.Tasks(ctx, actor, jsactor.TaskFilter{States: states, After: after, Limit: min(max(p.want, batch), 1000)})
		if err != nil {
			return err
		}
		for _, t := range ts {
			p.add(liveTask(t))
		}
		if next == 0 {
			return nil
		}
		after = next
	}
	return nil
}

// dead adds the actor's dead letters past ID after.
func (p *pager) dead(ctx context.Context, a *jsactor.Admin, actor string, after uint64) error {
	limit := min(max(p.want, batch), 1000)
	for !p.full() {
		ls, err := a.DeadLetters(ctx, actor, jsactor.LetterFilter{AfterID: after, Limit: limit})
		if err != nil {
			return err
		}
		for _, l := range ls {
			p.add(deadTask(l))
		}
		if len(ls) < limit {
			return nil
		}
		after = ls[len(ls)-1].ID
	}
	return nil
}

// Replay replays the dead letter key names; a key of a live task, or of
// a dead letter gone already, replays nothing.
func (ad admin) Replay(ctx context.Context, key console.TaskKey) (console.TaskKey, bool, error) {
	if err := ad.checkKey(key); err != nil || !key.Dead {
		return console.TaskKey{}, false, err
	}
	seqs, err := ad.a.Replay(ctx, key.Actor, key.ID)
	switch {
	case errors.Is(err, jsactor.ErrNoTask) && !errors.Is(err, jsactor.ErrUnknownActor):
		return console.TaskKey{}, false, nil
	case err != nil:
		return console.TaskKey{}, false, jsErr(err)
	case len(seqs) == 0:
		return console.TaskKey{}, false, nil
	}
	return console.TaskKey{Actor: key.Actor, ID: seqs[0]}, true, nil
}

// Delete deletes the waiting task or dead letter key names; jsactor
// leaves a running task alone.
func (ad admin) Delete(ctx context.Context, key console.TaskKey) (bool, error) {
	if err := ad.checkKey(key); err != nil {
		return false, err
	}
	if key.Dead {
		n, err := ad.a.DeleteDeadLetters(ctx, key.Actor, key.ID)
		return n > 0, jsErr(err)
	}
	seqs, err := ad.a.Delete(ctx, key.Actor, key.ID)
	return slices.Contains(seqs, key.ID), jsErr(err)
}

func (ad admin) Pause(ctx context.Context, actor string) error {
	if err := ad.checkActor(actor); err != nil {
		return err
	}
	return jsErr(ad.a.Pause(ctx, actor))
}

func (ad admin) Resume(ctx context.Context, actor string) error {
	if err := ad.checkActor(actor); err != nil {
		return err
	}
	return jsErr(ad.a.Resume(ctx, actor))
}
