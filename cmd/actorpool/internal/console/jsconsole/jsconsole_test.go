package jsconsole

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/cmd/actorpool/internal/console"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
)

const prefix = "jsconsole_test"

// rig is one test's private server and its actors: "bounce", whose tasks
// fail into the dead letters until heal is set, and "mail", which has no
// workers, so that its tasks stay where they are sent.
type rig struct {
	nc     *nats.Conn
	admin  console.Admin
	bounce *jsactor.Actor[string]
	mail   *jsactor.Actor[string]
	heal   *atomic.Bool
	ctx    context.Context
}

func newRig(t *testing.T) *rig {
	t.Helper()
	testenv.CheckGoroutines(t)
	srv, err := jsserver.Start(jsserver.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	r := &rig{nc: nc, heal: new(atomic.Bool), ctx: ctx}
	quiet := slog.New(slog.DiscardHandler)
	handle := func(ctx context.Context, task actor.Task[string]) error {
		if r.heal.Load() {
			return nil
		}
		return actor.Permanent(errors.New("smtp: 550 " + task.Payload))
	}
	r.bounce, err = jsactor.New(ctx, nc, "bounce", handle, jsactor.Config[string]{Prefix: prefix, Workers: 1, MaxAttempts: 1, Logger: quiet, OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, r.bounce.Close)
	r.mail, err = jsactor.New[string](ctx, nc, "mail", nil, jsactor.Config[string]{Prefix: prefix, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, r.mail.Close)
	ad, err := jsactor.NewAdmin(nc, prefix)
	if err != nil {
		t.Fatal(err)
	}
	r.admin = New(ad)
	return r
}

// send sends payload to a with opts, failing t on an error.
func (r *rig) send(t *testing.T, a *jsactor.Actor[string], payload string, opts ...jsactor.SendOption) {
	t.Helper()
	if _, err := a.Send(r.ctx, payload, opts...); err != nil {
		t.Fatal(err)
	}
}

// waitDead waits until bounce has n dead letters.
func (r *rig) waitDead(t *testing.T, n int) {
	t.Helper()
	end := time.Now().Add(30 * time.Second)
	for {
		s, err := r.bounce.Stats(r.ctx)
		if err == nil && s.DeadLetters == n && s.Queued+s.Running == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("bounce has %+v (err %v), want %d dead letters", s, err, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fill gives the rig two dead letters of bounce and, for mail, three
// queued tasks (keys k0 to k2) and one scheduled.
func (r *rig) fill(t *testing.T) {
	t.Helper()
	r.send(t, r.bounce, "a")
	r.send(t, r.bounce, "b")
	r.waitDead(t, 2)
	for i := range 3 {
		r.send(t, r.mail, fmt.Sprint("m", i), jsactor.UniqueKey(fmt.Sprint("k", i)))
	}
	r.send(t, r.mail, "later", jsactor.After(time.Hour))
}

// show writes tasks as "actor/payload/state", to compare; the payloads
// are JSON strings, shown without their quotes.
func show(tasks []console.TaskInfo) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, fmt.Sprintf("%s/%s/%s", t.Actor, strings.Trim(string(t.Payload), `"`), t.State))
	}
	return out
}

func TestBackend(t *testing.T) {
	r := newRig(t)
	b := r.admin.Backend()
	if b.Scope != "prefix" || b.Name != prefix || b.Package != "jsactor" || slices.Contains(b.States, console.TaskCanceling) || !slices.Contains(b.States, console.TaskDead) || b.Priorities || b.Owners {
		t.Errorf("Backend() = %+v: want prefix %q, every state but canceling, no priorities or owners", b, prefix)
	}
}

func TestActors(t *testing.T) {
	r := newRig(t)
	r.fill(t)
	if err := r.admin.Pause(r.ctx, "mail"); err != nil {
		t.Fatal(err)
	}
	actors, err := r.admin.Actors(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range actors {
		s := a.Stats
		got = append(got, fmt.Sprintf("%s paused=%v queued=%d scheduled=%d dead=%d", a.Name, a.Paused, s.Queued, s.Scheduled, s.DeadLetters))
	}
	want := []string{"bounce paused=false queued=0 scheduled=0 dead=2", "mail paused=true queued=3 scheduled=1 dead=0"}
	if !slices.Equal(got, want) {
		t.Errorf("Actors:\n got %q\nwant %q", got, want)
	}
	if err := r.admin.Resume(r.ctx, "mail"); err != nil {
		t.Fatal(err)
	}
	if actors, err = r.admin.Actors(r.ctx); err != nil || actors[1].Paused {
		t.Errorf("after Resume: mail paused=%v, err %v; want resumed", actors[1].Paused, err)
	}
	for _, op := range []func(context.Context, string) error{r.admin.Pause, r.admin.Resume} {
		if err := op(r.ctx, "nobody"); !console.IsNotFound(err) || !errors.Is(err, jsactor.ErrUnknownActor) {
			t.Errorf("pause or resume an unknown actor: %v; want one marked NotFound that wraps ErrUnknownActor", err)
		}
	}
}

func TestTasks(t *testing.T) {
	r := newRig(t)
	r.fill(t)
	all := []string{"bounce/a/dead", "bounce/b/dead", "mail/m0/queued", "mail/m1/queued", "mail/m2/queued", "mail/later/scheduled"}
	for _, tt := range []struct {
		name string
		f    console.TaskFilter
		want []string
	}{
		{"all", console.TaskFilter{}, all},
		{"dead", console.TaskFilter{States: []console.TaskState{console.TaskDead}}, all[:2]},
		{"queued", console.TaskFilter{States: []console.TaskState{console.TaskQueued}}, all[2:5]},
		{"scheduled and dead", console.TaskFilter{States: []console.TaskState{console.TaskScheduled, console.TaskDead}}, []string{all[0], all[1], all[5]}},
		{"running", console.TaskFilter{States: []console.TaskState{console.TaskRunning}}, nil},
		{"one actor", console.TaskFilter{Actor: "mail"}, all[2:]},
		{"key", console.TaskFilter{Key: "k1"}, []string{"mail/m1/queued"}},
		{"since the future", console.TaskFilter{Since: time.Now().Add(time.Hour)}, nil},
		{"until the future", console.TaskFilter{Until: time.Now().Add(time.Hour)}, all},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.Limit = 100
			page, err := r.admin.Tasks(r.ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := show(page.Tasks); !slices.Equal(got, tt.want) || !page.Next.IsZero() {
				t.Errorf("Tasks(%+v):\n got %q, next %v\nwant %q, next zero", tt.f, got, page.Next, tt.want)
			}
		})
	}
	// Pages of every size walk the same list, each task once.
	for limit := 1; limit <= len(all)+1; limit++ {
		var got []string
		f := console.TaskFilter{Limit: limit}
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatalf("limit %d: more than %d pages", limit, len(all))
			}
			page, err := r.admin.Tasks(r.ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Tasks) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page.Tasks))
			}
			got = append(got, show(page.Tasks)...)
			if page.Next.IsZero() {
				break
			}
			f.After = page.Next
		}
		if !slices.Equal(got, all) {
			t.Errorf("limit %d: pages\n got %q\nwant %q", limit, got, all)
		}
	}
	for _, tt := range []struct {
		name string
		f    console.TaskFilter
	}{
		{"unknown actor", console.TaskFilter{Actor: "nobody", Limit: 10}},
		{"cursor without actor", console.TaskFilter{After: console.TaskKey{ID: 3}, Limit: 10}},
	} {
		if _, err := r.admin.Tasks(r.ctx, tt.f); !console.IsNotFound(err) {
			t.Errorf("%s: %v; want an error marked NotFound", tt.name, err)
		}
	}
	if _, err := r.admin.Tasks(r.ctx, console.TaskFilter{}); err == nil {
		t.Error("Limit 0: no error")
	}
}

func TestTask(t *testing.T) {
	r := newRig(t)
	r.fill(t)
	page, err := r.admin.Tasks(r.ctx, console.TaskFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range page.Tasks {
		got, err := r.admin.Task(r.ctx, want.Ref)
		if err != nil {
			t.Errorf("Task(%s): %v", want.Ref, err)
			continue
		}
		if got.Ref != want.Ref || got.ID != want.ID || string(got.Payload) != string(want.Payload) || got.State != want.State {
			t.Errorf("Task(%s) = %+v, want %+v", want.Ref, got, want)
		}
	}
	dead, err := r.admin.Task(r.ctx, page.Tasks[0].Ref)
	switch {
	case err != nil:
		t.Fatal(err)
	case !dead.Ref.Dead || dead.Reason != jsactor.ReasonPermanent.String() || dead.LastError != "smtp: 550 a" || dead.DeadAt.IsZero() || dead.Attempt != 1:
		t.Errorf("dead letter = %+v: want a permanent error's, one attempt, with its time", dead)
	}
	last := page.Tasks[len(page.Tasks)-1]
	for _, key := range []console.TaskKey{
		{Actor: "mail", ID: last.Ref.ID + 1},
		{Actor: "bounce", Dead: true, ID: 99},
		{Actor: "nobody", ID: 1},
		{Actor: "nobody", Dead: true, ID: 1},
		{ID: last.Ref.ID},
		{Actor: "mail"},
	} {
		if _, err := r.admin.Task(r.ctx, key); !console.IsNotFound(err) {
			t.Errorf("Task(%s): %v; want an error marked NotFound", key, err)
		}
	}
}

func TestReplayDelete(t *testing.T) {
	r := newRig(t)
	r.fill(t)
	dead, err := r.admin.Tasks(r.ctx, console.TaskFilter{States: []console.TaskState{console.TaskDead}, Limit: 10})
	if err != nil || len(dead.Tasks) != 2 {
		t.Fatalf("dead letters: %q, %v; want 2", show(dead.Tasks), err)
	}
	queued, err := r.admin.Tasks(r.ctx, console.TaskFilter{Actor: "mail", States: []console.TaskState{console.TaskQueued}, Limit: 10})
	if err != nil || len(queued.Tasks) != 3 {
		t.Fatalf("queued: %q, %v; want 3", show(queued.Tasks), err)
	}
	first, second, live := dead.Tasks[0].Ref, dead.Tasks[1].Ref, queued.Tasks[0].Ref

	r.heal.Store(true)
	replayed, ok, err := r.admin.Replay(r.ctx, first)
	if err != nil || !ok || replayed.Actor != "bounce" || replayed.Dead {
		t.Fatalf("Replay(%s) = %v, %v, %v; want a live task of bounce", first, replayed, ok, err)
	}
	// The replayed task completes: the counters, flushed now and then,
	// come to say so.
	end := time.Now().Add(30 * time.Second)
	for {
		s, err := r.bounce.Stats(r.ctx)
		if err == nil && s.Completed == 1 && s.Replayed == 1 && s.DeadLetters == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after the replay: %+v, %v; want it completed, one dead letter left", s, err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	for _, tt := range []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"replay a dead letter again", func() (bool, error) { _, ok, err := r.admin.Replay(r.ctx, first); return ok, err }, false},
		{"replay a live task", func() (bool, error) { _, ok, err := r.admin.Replay(r.ctx, live); return ok, err }, false},
		{"delete a dead letter", func() (bool, error) { return r.admin.Delete(r.ctx, second) }, true},
		{"delete it again", func() (bool, error) { return r.admin.Delete(r.ctx, second) }, false},
		{"delete a queued task", func() (bool, error) { return r.admin.Delete(r.ctx, live) }, true},
		{"delete it again", func() (bool, error) { return r.admin.Delete(r.ctx, live) }, false},
	} {
		if ok, err := tt.do(); ok != tt.want || err != nil {
			t.Errorf("%s: %v, %v; want %v, nil", tt.name, ok, err, tt.want)
		}
	}
	page, err := r.admin.Tasks(r.ctx, console.TaskFilter{Limit: 100})
	want := []string{"mail/m1/queued", "mail/m2/queued", "mail/later/scheduled"}
	if got := show(page.Tasks); err != nil || !slices.Equal(got, want) {
		t.Errorf("left: %q, %v; want %q", got, err, want)
	}
	for _, key := range []console.TaskKey{{Actor: "nobody", Dead: true, ID: 1}, {Actor: "nobody", ID: 1}, {ID: 1}, {Dead: true, ID: 1}} {
		if _, _, err := r.admin.Replay(r.ctx, key); !console.IsNotFound(err) && !(key.Actor == "nobody" && !key.Dead && err == nil) {
			t.Errorf("Replay(%s): %v; want an error marked NotFound", key, err)
		}
		if _, err := r.admin.Delete(r.ctx, key); !console.IsNotFound(err) {
			t.Errorf("Delete(%s): %v; want an error marked NotFound", key, err)
		}
	}
}
