package jsactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/nats-io/nats.go"
)

// TestAdminTasks puts one task in each state and checks what the Admin
// lists, moves and deletes.
func TestAdminTasks(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	nc := connect(t, srv.ClientURL())
	release := make(chan struct{})
	defer close(release)
	started := make(chan string, 8)
	a, err := New(ctx, nc, "ops", func(ctx context.Context, task actor.Task[string]) error {
		started <- task.Payload
		switch task.Payload {
		case "running":
			<-release
			return nil
		case "failing":
			return errors.New("down")
		}
		return nil
	}, Config[string]{Workers: 4, MaxAttempts: 3, Backoff: actor.Backoff{Initial: time.Hour}, OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if _, err := a.Send(ctx, "running"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, "failing", WithType("mail"), UniqueKey("f")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-started
	}
	if err := a.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	queued, err := a.Send(ctx, "queued")
	if err != nil {
		t.Fatal(err)
	}
	scheduled, err := a.Send(ctx, "scheduled", After(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := NewAdmin(nc, "")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []TaskInfo
	eventually(t, 10*time.Second, "a task in each state", func() bool {
		tasks, _, err = admin.Tasks(ctx, "ops", TaskFilter{})
		return err == nil && len(tasks) == 4 && slices.ContainsFunc(tasks, func(ti TaskInfo) bool { return ti.State == TaskRetrying })
	})
	want := map[string]TaskState{"running": TaskRunning, "failing": TaskRetrying, "queued": TaskQueued, "scheduled": TaskScheduled}
	bySt := map[TaskState]TaskInfo{}
	for _, ti := range tasks {
		p, _ := strconv.Unquote(string(ti.Payload)) // JSON, as the codec stored it
		if want[p] != ti.State {
			t.Errorf("task %q is %s, want %s", p, ti.State, want[p])
		}
		bySt[ti.State] = ti
	}
	if r := bySt[TaskRetrying]; r.Attempts != 1 || r.LastError != "down" || r.Type != "mail" || r.UniqueKey != "f" || r.Due.IsZero() {
		t.Errorf("the retrying task = %+v", r)
	}
	if q := bySt[TaskQueued]; q.ID != queued || q.Seq != queued {
		t.Errorf("the queued task = %+v, want ID and Seq %d", q, queued)
	}
	page, next, err := admin.Tasks(ctx, "ops", TaskFilter{Limit: 1})
	if err != nil || len(page) != 1 || next != page[0].Seq {
		t.Errorf("a page of one = %v, next %d, %v", page, next, err)
	}
	only, _, err := admin.Tasks(ctx, "ops", TaskFilter{States: []TaskState{TaskScheduled}})
	if err != nil || len(only) != 1 || only[0].ID != scheduled {
		t.Errorf("scheduled tasks = %v, %v", only, err)
	}

	// Delete leaves a running task alone.
	del, err := admin.Delete(ctx, "ops", bySt[TaskRunning].Seq, bySt[TaskQueued].Seq)
	if err != nil || !slices.Equal(del, []uint64{bySt[TaskQueued].Seq}) {
		t.Errorf("Delete = %v, %v; want only the queued task", del, err)
	}
	// RunNow moves the scheduled and the retrying tasks to the ready ones.
	moved, err := admin.RunNow(ctx, "ops", bySt[TaskScheduled].Seq, bySt[TaskRetrying].Seq, bySt[TaskRunning].Seq)
	if err != nil || len(moved) != 2 {
		t.Errorf("RunNow = %v, %v; want the scheduled and retrying tasks", moved, err)
	}
	if err := admin.Resume(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range 2 {
		select {
		case p := <-started:
			got[p] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("after RunNow, ran %v", got)
		}
	}
	if !got["scheduled"] || !got["failing"] {
		t.Errorf("after RunNow, ran %v; want the scheduled and the failing task", got)
	}

	actors, err := admin.Actors(ctx)
	if err != nil || len(actors) != 1 || actors[0].Name != "ops" || actors[0].Stats.Accepted == 0 && actors[0].Stats.Running == 0 {
		t.Errorf("Actors = %+v, %v", actors, err)
	}
}

func TestAdminRefusals(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	if _, err := NewAdmin(nc, "bad.prefix"); err == nil {
		t.Error("a prefix with a dot accepted")
	}
	admin, err := NewAdmin(nc, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Stats":  func() error { _, err := admin.Stats(ctx, "nobody"); return err }(),
		"Pause":  admin.Pause(ctx, "nobody"),
		"Tasks":  func() error { _, _, err := admin.Tasks(ctx, "nobody", TaskFilter{}); return err }(),
		"RunNow": func() error { _, err := admin.RunNow(ctx, "nobody", 1); return err }(),
	} {
		if !errors.Is(err, ErrUnknownActor) {
			t.Errorf("%s of an unknown actor: %v, want ErrUnknownActor", name, err)
		}
	}
	if _, err := New[int](ctx, nc, "known", nil, Config[int]{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := admin.Tasks(ctx, "known", TaskFilter{Limit: 5000}); err == nil {
		t.Error("Limit 5000 accepted")
	}
	if _, _, err := admin.Tasks(ctx, "known", TaskFilter{States: []TaskState{"dead"}}); err == nil {
		t.Error("an unknown state accepted")
	}
	actors, err := admin.Actors(ctx)
	if err != nil || len(actors) != 1 || actors[0].Name != "known" {
		t.Errorf("Actors = %+v, %v", actors, err)
	}
}

// TestAdminDeadLetters reads, replays and deletes dead letters through an
// Admin, which knows no payload type.
func TestAdminDeadLetters(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	nc := connect(t, srv.ClientURL())
	var fixed atomic.Bool
	ran := make(chan int, 4)
	a, err := New(ctx, nc, "letters", func(ctx context.Context, task actor.Task[int]) error {
		if !fixed.Load() {
			return errors.New("broken")
		}
		ran <- task.Payload
		return nil
	}, Config[int]{OnError: func(*actor.TaskError) {}, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	for _, p := range []int{1, 2} {
		if _, err := a.Send(ctx, p, WithType("n")); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := NewAdmin(nc, "")
	if err != nil {
		t.Fatal(err)
	}
	var letters []LetterInfo
	eventually(t, 10*time.Second, "two dead letters", func() bool {
		letters, err = admin.DeadLetters(ctx, "letters", LetterFilter{Type: "n"})
		return err == nil && len(letters) == 2
	})
	if l := letters[0]; l.Reason != ReasonMaxAttempts || l.Err != "broken" || string(l.Payload) != "1" || l.Attempts != 1 || l.TaskID == 0 {
		t.Errorf("letter = %+v", l)
	}
	fixed.Store(true)
	ids, err := admin.Replay(ctx, "letters", letters[0].ID)
	if err != nil || len(ids) != 1 {
		t.Fatalf("Replay = %v, %v", ids, err)
	}
	if p := <-ran; p != 1 {
		t.Errorf("replayed task ran with %d, want 1", p)
	}
	if n, err := admin.DeleteDeadLetters(ctx, "letters", letters[1].ID, letters[0].ID); err != nil || n != 1 {
		t.Errorf("DeleteDeadLetters = %d, %v; want 1 (the other was replayed)", n, err)
	}
	eventually(t, 5*time.Second, "the counters count the replay", func() bool {
		s, err := admin.Stats(ctx, "letters")
		return err == nil && s.Replayed == 1 && s.Accepted == 3 && s.Completed == 1 && s.DeadLetters == 0
	})
	if _, err := admin.DeadLetters(ctx, "nobody", LetterFilter{}); !errors.Is(err, ErrUnknownActor) {
		t.Errorf("dead letters of an unknown actor: %v, want ErrUnknownActor", err)
	}
}

// TestAdminDeleteRacesDelivery has a worker take a queued task after
// Delete found it queued and before it deleted it. JetStream deletes the
// message under the running handler; Delete must not report the task
// deleted, since it runs and ends as its handler says.
func TestAdminDeleteRacesDelivery(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, started, release := pausedBlockingActor(t, ctx, nc, "delrace")
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := NewAdmin(nc, "")
	if err != nil {
		t.Fatal(err)
	}
	admin.deleting = func(seq uint64) { resumeUntilStarted(t, ctx, admin, "delrace", started) }
	deleted, err := admin.Delete(ctx, "delrace", id)
	if len(deleted) != 0 || !errors.Is(err, ErrMaybeRunning) {
		t.Errorf("Delete of a task taken as it was deleted = %v, %v; want none deleted and ErrMaybeRunning", deleted, err)
	}
	close(release)
	s := closedStats(t, ctx, a)
	if s.Accepted != 1 || s.Completed != 1 || s.Queued+s.Running != 0 {
		t.Errorf("stats = %+v, want the task accepted and completed, none queued or running", s)
	}
	select {
	case again := <-started:
		t.Errorf("task %d ran again", again)
	default:
	}
}

// TestAdminDeleteMaybeRunningReported has Delete fail after it deleted a
// task that a worker took as it was deleted: its error still wraps
// ErrMaybeRunning and names that task, whose message is gone, along with
// the failure.
func TestAdminDeleteMaybeRunningReported(t *testing.T) {
	for _, fail := range []string{"a later task's delete", "the delivered sequence's read"} {
		t.Run(fail, func(t *testing.T) {
			nc := rig(t)
			ctx := ctxT(t)
			a, started, release := pausedBlockingActor(t, ctx, nc, "delfail")
			closeT(t, a)
			defer close(release) // before Close
			taken, err := a.Send(ctx, "taken")
			if err != nil {
				t.Fatal(err)
			}
			other, err := a.Send(ctx, "other")
			if err != nil {
				t.Fatal(err)
			}
			admin, err := NewAdmin(nc, "")
			if err != nil {
				t.Fatal(err)
			}
			opCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			admin.deleting = func(seq uint64) {
				switch {
				case seq == taken:
					resumeUntilStarted(t, ctx, admin, "delfail", started)
					if fail == "the delivered sequence's read" {
						// Delete then cannot learn whether a worker
						// took the task.
						if err := a.stream.DeleteConsumer(ctx, consumerRun); err != nil {
							t.Error(err)
						}
					}
				case seq == other:
					cancel() // the delete fails
				}
			}
			deleted, err := admin.Delete(opCtx, "delfail", taken, other)
			if len(deleted) != 0 || !errors.Is(err, ErrMaybeRunning) || !strings.Contains(fmt.Sprint(err), strconv.FormatUint(taken, 10)) {
				t.Errorf("Delete = %v, %v; want none deleted, and ErrMaybeRunning naming task %d", deleted, err, taken)
			}
		})
	}
}

// TestAdminDeleteRacesDue has Delete delete a scheduled task as it comes
// due, once the delayed consumer's timer stored its copy among the ready
// tasks and before it acknowledged the original. The task lives on as the
// copy and runs: Delete must not report it deleted. A task due later is.
func TestAdminDeleteRacesDue(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	ran := make(chan uint64, 2)
	a, err := New(ctx, nc, "deldue", func(ctx context.Context, task actor.Task[string]) error {
		ran <- task.ID
		return nil
	}, Config[string]{Workers: 1, FlushInterval: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	copied, deleted := make(chan struct{}), make(chan struct{})
	a.faults.Store(&faults{dueCopied: func(uint64) {
		close(copied)
		<-deleted
	}})
	later, err := a.Send(ctx, "later", After(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	due, err := a.Send(ctx, "due", After(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := NewAdmin(nc, "")
	if err != nil {
		t.Fatal(err)
	}
	admin.deleting = func(seq uint64) {
		if seq == due {
			<-copied
		}
	}
	got, err := admin.Delete(ctx, "deldue", later, due)
	close(deleted)
	if !slices.Equal(got, []uint64{later}) || !errors.Is(err, ErrMaybeRunning) {
		t.Errorf("Delete of a task due later and of one moving as it was deleted = %v, %v; want the first deleted and ErrMaybeRunning", got, err)
	}
	select {
	case id := <-ran:
		if id != due {
			t.Errorf("task %d ran, want %d", id, due)
		}
	case <-ctx.Done():
		t.Fatal("the task that came due did not run")
	}
}

// pausedBlockingActor starts a paused actor named name with one worker,
// whose handler sends the id of each task it starts on started and then
// waits for release to be closed.
func pausedBlockingActor(t *testing.T, ctx context.Context, nc *nats.Conn, name string) (a *Actor[string], started chan uint64, release chan struct{}) {
	t.Helper()
	started, release = make(chan uint64, 2), make(chan struct{})
	a, err := New(ctx, nc, name, func(ctx context.Context, task actor.Task[string]) error {
		started <- task.ID
		<-release
		return nil
	}, Config[string]{Workers: 1, FlushInterval: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	return a, started, release
}

// resumeUntilStarted resumes the actor named name and waits until its
// worker has started a task: from Admin.deleting, it has a worker take
// the task being deleted.
func resumeUntilStarted(t *testing.T, ctx context.Context, admin *Admin, name string, started <-chan uint64) {
	if err := admin.Resume(ctx, name); err != nil {
		t.Error(err)
		return
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Error("the task did not start after Resume")
	}
}
