package jsactor

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/leakcheck"
)

// The frozen-worker test checks the Leases section of the package
// documentation on a process frozen with SIGSTOP in a handler, past its
// lease, while another worker takes the task over and completes it. Thawed,
// the frozen worker must find its lease lost: its handler's context ends
// with ErrLeaseLost, and it drops the handler's result instead of
// acknowledging the task a second time.
const (
	frozenActor = "frozen"
	frozenLease = time.Second
	// frozenRun is how long the child's handler runs, ignoring its
	// context: long enough to be still running when the test thaws it,
	// however slowly a loaded machine redelivers the task.
	frozenRun = 4 * frozenLease
)

func frozenConfig(log *slog.Logger, workers int) Config[string] {
	// MaxAttempts 3: the frozen run counts as the first attempt.
	return Config[string]{Workers: workers, Lease: frozenLease, MaxAttempts: 3, FlushInterval: 50 * time.Millisecond, Logger: log}
}

func TestFrozenWorker(t *testing.T) {
	leakcheck.Check(t)
	url := startServer(t).ClientURL()
	ctx := ctxT(t)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sender, err := New(ctx, connect(t, url), frozenActor, nil, frozenConfig(log, 0))
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, sender)

	frozen := startChild(t, "the frozen child", "frozen", url, t.TempDir())
	frozen.waitFor(30*time.Second, regexp.MustCompile(`frozen: ready`))
	id, err := sender.Send(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	m := frozen.waitFor(10*time.Second, regexp.MustCompile(`frozen: started task (\d+)`))
	if m[1] != strconv.FormatUint(id, 10) {
		t.Fatalf("the child started task %s, want %d", m[1], id)
	}
	frozen.signal(syscall.SIGSTOP)
	stopped := time.Now()

	// A worker in this process, which starts only now so that the task
	// reaches it only once the frozen child's lease has run out.
	var seen runs
	worker, err := New(ctx, connect(t, url), frozenActor, func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		return nil
	}, frozenConfig(log, 1))
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, worker)
	eventually(t, 20*time.Second, "the worker in the test took the task over and completed it", func() bool {
		s, err := worker.Stats(ctx)
		return seen.count() == 1 && err == nil && s.Running == 0 && s.Queued == 0
	})
	frozen.signal(syscall.SIGCONT)
	t.Logf("the child was frozen for %v; the task was taken over and completed meanwhile", time.Since(stopped).Round(time.Millisecond))

	m = frozen.waitFor(frozenRun+20*time.Second, regexp.MustCompile(`frozen: task (\d+) returned; its context's cause: (.*)`))
	if m[2] != ErrLeaseLost.Error() {
		t.Errorf("the thawed child's handler context ended with cause %q, want ErrLeaseLost", m[2])
	}
	frozen.stop(20 * time.Second)
	if err := worker.Close(ctx); err != nil {
		t.Fatal(err)
	}
	dropped := regexp.MustCompile(fmt.Sprintf(`lease lost before the result could be recorded[^\n]*task_id=%d\b`, id))
	if !dropped.MatchString(frozen.out.String()) {
		t.Errorf("the thawed child did not log that it dropped the result of task %d; its output:\n%s", id, frozen.tail())
	}

	if r := seen.list(); len(r) != 1 || r[0].ID != id || r[0].Attempt != 2 {
		t.Errorf("the worker in the test ran %+v, want task %d once, at attempt 2 (the frozen run charged)", r, id)
	}
	s, err := sender.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Completed != 1 || s.Lost != 1 || s.DeadLettered != 0 || s.Queued+s.Scheduled+s.Running+s.Retrying != 0 {
		t.Errorf("stats %+v; want 1 completed (the thawed child's acknowledgement not counted), 1 lost run, nothing left", s)
	}
}

// frozenChild is the frozen child's main: one worker, whose handler says
// when it starts, runs for frozenRun ignoring its context, waits for its
// context to end, and says with what cause.
func frozenChild(env childEnvironment) error {
	a, err := New(context.Background(), env.nc, frozenActor, func(ctx context.Context, task actor.Task[string]) error {
		fmt.Printf("frozen: started task %d\n", task.ID)
		time.Sleep(frozenRun)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		fmt.Printf("frozen: task %d returned; its context's cause: %v\n", task.ID, context.Cause(ctx))
		return nil
	}, frozenConfig(env.log, 1))
	if err != nil {
		return err
	}
	fmt.Println("frozen: ready")
	return closeChildActor(env, a)
}
