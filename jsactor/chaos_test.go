package jsactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/leakcheck"
)

// The chaos test runs the actor in three worker processes — children of
// this test binary (see child_test.go) — on one server in the test
// process, and kills one of them with SIGKILL every 0.3 to 1 second,
// starting another in its place, while the test sends tasks and keeps a
// ledger of every send the stream acknowledged. Each worker's handler
// appends the task's ID to a file of its process before it returns, so
// that every run whose result the actor could have acknowledged is on
// record, whenever the process dies. Once the workers, left alone, have
// drained the queue and closed, every acknowledged task must have run or
// be a dead letter; runs beyond the first are counted and reported: the
// actor runs a task at least once, not exactly once.
const (
	chaosActor = "chaos"
	chaosLease = time.Second
	chaosProcs = 3
)

// errChaosFirst fails the first attempt of one task in a hundred, so that
// retries, which publish copies of their task, are killed in the middle
// too.
var errChaosFirst = errors.New("chaos: the first attempt of this task fails")

// chaosTasks returns how many tasks the test sends, and over how long:
// JSACTOR_CHAOS_TASKS or 20,000 over 20 seconds, or 3,000 over 5 seconds
// with -short.
func chaosTasks() (int, time.Duration) {
	n, d := 20000, 20*time.Second
	if testing.Short() {
		n, d = 3000, 5*time.Second
	}
	if v, err := strconv.Atoi(os.Getenv("JSACTOR_CHAOS_TASKS")); err == nil && v > 0 {
		n = v
	}
	return n, d
}

func chaosConfig(log *slog.Logger, workers int) Config[int] {
	return Config[int]{
		Workers: workers, Lease: chaosLease, MaxAttempts: 50, MaxLost: 1000,
		Backoff:       actor.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond},
		FlushInterval: 200 * time.Millisecond, Logger: log,
		OnError: func(e *actor.TaskError) {
			if !errors.Is(e.Err, errChaosFirst) {
				log.Warn("task failed", "error", e)
			}
		},
	}
}

func TestChaos(t *testing.T) {
	leakcheck.Check(t)
	url := startServer(t).ClientURL()
	nc := connect(t, url)
	// The test's own deadline, not ctxT's 30 s: it sends for about 20 s
	// and then waits up to a minute for the queue to drain, and on a
	// loaded machine it ran past 30 s, every Stats call then failed, and
	// the drain was never seen.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sender, err := New(ctx, nc, chaosActor, nil, chaosConfig(log, 0))
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, sender)

	w := &chaosWorkers{t: t, url: url, dir: t.TempDir()}
	for i := range chaosProcs {
		w.start(i)
	}

	// The sender: batches, each acknowledged task in the ledger, spread
	// over the time the kills last.
	total, sendFor := chaosTasks()
	ledger := make(map[uint64]int, total)
	var ledgerMu sync.Mutex
	sent := make(chan struct{})
	stop := make(chan struct{})
	defer func() { // before the test ends, however it ends
		close(stop)
		<-sent
	}()
	go func() {
		defer close(sent)
		const batch = 100
		tick := time.NewTicker(sendFor * batch / time.Duration(total))
		defer tick.Stop()
		for next := 0; next < total; next += batch {
			select {
			case <-tick.C:
			case <-stop:
				return
			}
			payloads := make([]int, min(batch, total-next))
			for i := range payloads {
				payloads[i] = next + i
			}
			ids, err := sender.SendBatch(context.Background(), payloads)
			ledgerMu.Lock()
			for i, id := range ids {
				if _, dup := ledger[id]; dup && id != 0 {
					t.Errorf("two sends acknowledged with task ID %d", id)
				}
				if id != 0 {
					ledger[id] = payloads[i]
				}
			}
			ledgerMu.Unlock()
			if err != nil {
				t.Errorf("send: %v", err) // the server runs throughout: every send must be stored
				return
			}
		}
	}()

	// The kills, while the sender sends and for a few seconds at least.
	began := time.Now()
	for {
		time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
		done := false
		select {
		case <-sent:
			done = true
		default:
		}
		if done {
			break
		}
		w.kill(rand.IntN(chaosProcs))
	}
	t.Logf("%v: %d tasks sent, %d workers killed; draining", time.Since(began).Round(time.Millisecond), len(ledger), w.killed)

	// The workers left alone finish the queue, and close.
	// The gauges are read one after another, so that a task moving from
	// one consumer to another can escape them: the queue is drained once
	// they are zero and every task ran, but for as many as are dead
	// letters.
	eventually(t, 60*time.Second, "the workers drain the queue", func() bool {
		w.check()
		s, err := sender.Stats(ctx)
		if err != nil || s.Queued+s.Scheduled+s.Running+s.Retrying != 0 {
			return false
		}
		runs := w.runs()
		notRun := 0
		for id := range ledger {
			if runs[id] == 0 {
				notRun++
			}
		}
		return notRun <= s.DeadLetters
	})
	drained := time.Since(began)
	w.stopAll()
	if err := sender.Close(ctx); err != nil {
		t.Fatal(err)
	}

	runs := w.runs()
	var letters []DeadLetter[int]
	for after := uint64(0); ; {
		page, err := sender.DeadLetters(ctx, LetterFilter{AfterID: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		letters = append(letters, page...)
		after = page[len(page)-1].ID
	}
	dead := map[uint64]bool{}
	for _, l := range letters {
		dead[l.Task.ID] = true
		t.Logf("dead letter: task %d, %v, %d attempts, %d lost: %v", l.Task.ID, l.Reason, l.Attempts, l.Lost, l.Err)
	}

	var missing []uint64
	duplicates, ranTwice := 0, 0
	for id := range ledger {
		switch n := runs[id]; {
		case n == 0 && !dead[id]:
			missing = append(missing, id)
		case n > 1:
			duplicates += n - 1
			ranTwice++
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d acknowledged tasks neither ran nor are dead letters, among them %v", len(missing), missing[:min(len(missing), 20)])
	}
	for id := range runs {
		if _, ok := ledger[id]; !ok {
			t.Errorf("task %d ran, but no send was acknowledged with its ID", id)
		}
	}
	s, err := ReadStats(ctx, nc, "", chaosActor)
	if err != nil {
		t.Fatal(err)
	}
	if s.Accepted != uint64(len(ledger)) || s.Queued+s.Scheduled+s.Running+s.Retrying != 0 || s.DeadLetters != len(letters) {
		t.Errorf("stats %+v, for %d acknowledged sends and %d dead letters", s, len(ledger), len(letters))
	}
	if w.killed < 3 {
		t.Errorf("%d workers killed: the test tested little", w.killed)
	}
	t.Logf("%v: drained, %d acknowledged tasks, %d workers killed; %d duplicate runs (%d tasks ran more than once), %d dead letters; "+
		"counters: %d completed, %d lost runs, %d failed, %d retried (short by what the killed processes had not flushed); "+
		"%d results dropped for a lost lease, %d acknowledgements not confirmed",
		drained.Round(time.Millisecond), len(ledger), w.killed, duplicates, ranTwice, len(letters),
		s.Completed, s.Lost, s.Failed, s.Retried,
		w.count(`lease lost before the result could be recorded`), w.count(`acknowledgement not confirmed`))
}

// chaosWorkers are the worker processes, those killed included.
type chaosWorkers struct {
	t      *testing.T
	url    string
	dir    string
	gen    int
	procs  [chaosProcs]*child
	all    []*child
	killed int
}

// start starts worker i.
func (w *chaosWorkers) start(i int) {
	w.gen++
	c := startChild(w.t, fmt.Sprintf("worker %d (#%d)", i, w.gen), "chaos", w.url, w.dir)
	w.procs[i] = c
	w.all = append(w.all, c)
}

// check fails the test for a worker that exited by itself, and starts
// another in its place.
func (w *chaosWorkers) check() {
	for i, c := range w.procs {
		if c.exited() {
			w.t.Errorf("%s exited: %v\n%s", c.name, c.err, c.tail())
			w.start(i)
		}
	}
}

// kill kills worker i with SIGKILL, and starts another in its place.
func (w *chaosWorkers) kill(i int) {
	w.check()
	w.procs[i].kill()
	w.killed++
	w.start(i)
}

// stopAll asks every worker to close, at once, and waits for them.
func (w *chaosWorkers) stopAll() {
	var wg sync.WaitGroup
	for _, c := range w.procs {
		wg.Go(func() { c.stop(20 * time.Second) })
	}
	wg.Wait()
}

// runs reads the workers' records: how many times each task's handler
// succeeded.
func (w *chaosWorkers) runs() map[uint64]int {
	files, err := filepath.Glob(filepath.Join(w.dir, "runs-*"))
	if err != nil {
		w.t.Fatal(err)
	}
	runs := map[uint64]int{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			w.t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for _, line := range lines[:len(lines)-1] { // the last is "", or a record still being written
			id, err := strconv.ParseUint(line, 10, 64)
			if err != nil {
				w.t.Errorf("%s: a record %q is not a task ID", name, line)
				continue
			}
			runs[id]++
		}
	}
	return runs
}

// count counts the lines of the workers' output that match re.
func (w *chaosWorkers) count(re string) int {
	rx := regexp.MustCompile(re)
	n := 0
	for _, c := range w.all {
		for line := range strings.Lines(c.out.String()) {
			if rx.MatchString(line) {
				n++
			}
		}
	}
	return n
}

// chaosChild is a worker process's main: the actor with eight workers,
// whose handler records each task it completes in this process's file.
func chaosChild(env childEnvironment) error {
	f, err := os.OpenFile(filepath.Join(env.dir, fmt.Sprintf("runs-%d", os.Getpid())), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	a, err := New(context.Background(), env.nc, chaosActor, func(ctx context.Context, task actor.Task[int]) error {
		time.Sleep(time.Duration(rand.IntN(20_000)) * time.Microsecond) // some work, for a kill to land in
		if task.Payload%100 == 7 && task.Attempt == 1 {
			return errChaosFirst
		}
		// One write, unbuffered: it is in the file once it returns, even
		// if the process is killed the next instant.
		_, err := f.WriteString(strconv.FormatUint(task.ID, 10) + "\n")
		return err
	}, chaosConfig(env.log, 8))
	if err != nil {
		return err
	}
	fmt.Println("chaos: ready")
	return closeChildActor(env, a)
}
