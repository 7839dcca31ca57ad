package pgactor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgpool"
)

// The chaos test runs the actors in worker processes — this test binary,
// re-run with chaosEnv set — and kills them: at random moments, and at
// named points where a worker dies by its own SIGKILL, as if killed there:
//
//	handler  inside a handler
//	handled  after the handler returned, before its completion is written
//	commit   after a Tx handler's completion is written, before it commits
//	fetched  after tasks were taken, before they reach a worker
//
// It also freezes a worker (SIGSTOP) past its leases and thaws it, so that
// it tries to complete tasks that others took over meanwhile. Producers in
// the test keep a ledger of every acknowledged send. At the end every
// acknowledged task must be completed or dead-lettered exactly once, the
// tasks of the Tx actor must have left exactly one effect each, and the
// re-runs of the other actor's handler are counted and reported.
const (
	chaosEnv       = "PGACTOR_CHAOS_WORKER" // the schema; set in worker processes
	chaosKillAtEnv = "PGACTOR_CHAOS_KILL_AT"
	chaosLease     = time.Second
)

// chaosPoints are the named points, and "" for a worker killed only at
// random moments.
var chaosPoints = []string{"handler", "handled", "commit", "fetched", ""}

// chaosTasks is how many tasks the producers send: PGACTOR_CHAOS_TASKS, or
// 20,000, or 6,000 under the race detector, which slows the workers
// severalfold, to keep the test within a minute.
func chaosTasks() int {
	if n, err := strconv.Atoi(os.Getenv("PGACTOR_CHAOS_TASKS")); err == nil && n > 0 {
		return n
	}
	if raceEnabled {
		return 6000
	}
	return 20000
}

func TestChaos(t *testing.T) {
	r := newRig(t)
	r.exec(`CREATE TABLE {s}.effects (task bigint NOT NULL)`) // written by the Tx actor's handler, in the task's transaction
	r.exec(`CREATE TABLE {s}.runs (task bigint NOT NULL)`)    // written by the other's, on its own: one row per run
	txSender := start(r, "chaos_tx", nil, Config[int]{})
	plainSender := start(r, "chaos_plain", nil, Config[int]{})

	w := &chaosWorkers{t: t, schema: r.schema, dsn: r.dsn, logs: t.TempDir()}
	defer w.stopAll()
	for i := range 3 {
		w.start(i)
	}

	// Producers: a ledger of every acknowledged send.
	total := chaosTasks()
	var mu sync.Mutex
	acked := map[string]map[uint64]bool{"chaos_tx": {}, "chaos_plain": {}}
	var sent atomic.Int64
	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			a := txSender
			if p%2 == 1 {
				a = plainSender
			}
			for i := 0; sent.Load() < int64(total); i++ {
				var ids []uint64
				var err error
				if i%5 == 0 {
					ids, err = a.SendBatch(context.Background(), make([]int, 20))
				} else {
					var id uint64
					id, err = a.Send(context.Background(), i)
					ids = []uint64{id}
				}
				if err != nil {
					t.Errorf("send: %v", err) // the server is up: a send must succeed
					return
				}
				mu.Lock()
				for _, id := range ids {
					acked[a.name][id] = true
				}
				mu.Unlock()
				sent.Add(int64(len(ids)))
				time.Sleep(time.Duration(rand.IntN(2)) * time.Millisecond)
			}
		})
	}

	// Chaos, while the producers send and for a while after.
	began := time.Now()
	frozen := false
	for step := 0; ; step++ {
		time.Sleep(time.Duration(200+rand.IntN(400)) * time.Millisecond)
		w.restartExited()
		if waitTimeout(&producers, 0) && time.Since(began) > 8*time.Second {
			break
		}
		switch i := rand.IntN(3); {
		case !frozen && step == 5:
			frozen = true
			w.freeze(i, 3*chaosLease)
		default:
			w.kill(i)
		}
	}
	w.restartExited()
	t.Logf("%v: %d sent; calming", time.Since(began).Round(time.Millisecond), sent.Load())
	w.calm()

	// Drain: the workers left alone finish the queue.
	deadline := time.Now().Add(90 * time.Second)
	for _, a := range []*Actor[int]{txSender, plainSender} {
		for {
			s := stats(t, a)
			if s.Queued+s.Scheduled+s.Running+s.Retrying == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not drain: %+v", a.name, s)
			}
			w.restartExited()
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("%v: drained", time.Since(began).Round(time.Millisecond))
	w.stopAll()

	t.Logf("%v: stopped", time.Since(began).Round(time.Millisecond))

	// Every acknowledged task completed or dead-lettered exactly once.
	ids := func(sql string) map[uint64]int {
		rows, err := r.pool.Query(context.Background(), expand(r.schema, sql))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[uint64]int{}
		for rows.Next() {
			var id, n int64
			if err := rows.Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			m[uint64(id)] = int(n)
		}
		return m
	}
	effects := ids(`SELECT task, count(*) FROM {s}.effects GROUP BY task`)
	runs := ids(`SELECT task, count(*) FROM {s}.runs GROUP BY task`)
	letters := map[string]map[uint64]int{
		"chaos_tx":    ids(`SELECT id, 1 FROM {s}.dead_letters WHERE actor = 'chaos_tx'`),
		"chaos_plain": ids(`SELECT id, 1 FROM {s}.dead_letters WHERE actor = 'chaos_plain'`),
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`); n != 0 {
		t.Errorf("%d tasks left in the queue", n)
	}
	reruns := 0
	for name, ledger := range acked {
		for id := range ledger {
			dead := letters[name][id] > 0
			switch name {
			case "chaos_tx":
				if n := effects[id]; (n != 1 && !dead) || (n != 0 && dead) {
					t.Errorf("Tx task %d: %d effects, dead-lettered %v; want one effect, or none and a dead letter", id, n, dead)
				}
			case "chaos_plain":
				if runs[id] == 0 && !dead {
					t.Errorf("task %d never ran and is not a dead letter", id)
				}
				reruns += max(runs[id]-1, 0)
			}
		}
		s, err := ReadStats(context.Background(), r.pool, r.schema, name)
		if err != nil {
			t.Fatal(err)
		}
		checkIdentity(t, s)
		if s.Accepted != uint64(len(ledger)) || s.Completed+s.DeadLettered != s.Accepted || s.DeadLettered != uint64(len(letters[name])) {
			t.Errorf("%s: %+v for %d acknowledged sends and %d dead letters", name, s, len(ledger), len(letters[name]))
		}
		t.Logf("%s: %d acknowledged, %d completed, %d dead-lettered, %d lost runs taken over", name, len(ledger), s.Completed, s.DeadLettered, s.Lost)
	}
	refused := w.count("result refused")
	t.Logf("%v: %d workers killed at random, %d at their fault point; %d re-runs of plain tasks; %d late results refused (a frozen worker's among them)",
		time.Since(began).Round(time.Second), w.killed.Load(), w.selfKilled.Load(), reruns, refused)
	if w.selfKilled.Load() == 0 || w.killed.Load() == 0 {
		t.Errorf("no worker was killed (%d at random, %d at a fault point): the test tested nothing", w.killed.Load(), w.selfKilled.Load())
	}
	if w.frozenRefusals == 0 && refused == 0 {
		t.Log("the frozen worker had no result to refuse this run")
	}
}

// chaosWorkers are the worker processes.
type chaosWorkers struct {
	t                  *testing.T
	schema, dsn, logs  string
	mu                 sync.Mutex
	procs              [3]*exec.Cmd
	exited             [3]chan struct{}
	gen                int
	calmed             bool // workers die at no point from now on
	killed, selfKilled atomic.Int64
	frozenRefusals     int
}

// start starts worker i, with a named point to die at.
func (w *chaosWorkers) start(i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	point := chaosPoints[w.gen%len(chaosPoints)]
	if w.calmed {
		point = ""
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), chaosEnv+"="+w.schema, chaosKillAtEnv+"="+point, testenv.PostgresVar+"="+w.dsn)
	out, err := os.Create(fmt.Sprintf("%s/worker-%d.log", w.logs, w.gen))
	if err != nil {
		w.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		out.Close()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
			if ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL && w.wasSelfKill(cmd) {
				w.selfKilled.Add(1)
			}
		default:
			b, _ := os.ReadFile(out.Name())
			w.t.Errorf("worker %d (point %q) failed: %v\n%s", i, point, err, tail(b, 30000))
		}
		close(done)
	}()
	w.procs[i], w.exited[i] = cmd, done
}

// wasSelfKill reports whether the worker killed itself at its point: it
// says so on its output first.
func (w *chaosWorkers) wasSelfKill(cmd *exec.Cmd) bool {
	f, ok := cmd.Stdout.(*os.File)
	if !ok {
		return false
	}
	b, _ := os.ReadFile(f.Name())
	return bytes.Contains(b, []byte("chaos: killed at "))
}

// kill SIGKILLs worker i, if it runs, and starts another in its place.
func (w *chaosWorkers) kill(i int) {
	w.mu.Lock()
	cmd, done := w.procs[i], w.exited[i]
	w.mu.Unlock()
	select {
	case <-done:
	default:
		cmd.Process.Kill()
		w.killed.Add(1)
		<-done
	}
	w.start(i)
}

// freeze stops worker i for d, past its leases, then lets it go on.
func (w *chaosWorkers) freeze(i int, d time.Duration) {
	w.mu.Lock()
	cmd := w.procs[i]
	w.mu.Unlock()
	before := w.count("result refused")
	cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(2 * chaosLease)
	w.frozenRefusals = w.count("result refused") - before
	w.t.Logf("worker %d frozen for %v: %d late results refused since", i, d, w.frozenRefusals)
}

// restartExited starts a worker in place of each that exited.
func (w *chaosWorkers) restartExited() {
	for i := range w.procs {
		select {
		case <-w.exited[i]:
			w.start(i)
		default:
		}
	}
}

// calm tells every worker, with SIGUSR1, to die at no point from now on.
func (w *chaosWorkers) calm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calmed = true
	for _, cmd := range w.procs {
		cmd.Process.Signal(syscall.SIGUSR1)
	}
}

// stopAll asks each worker to close and waits for it.
func (w *chaosWorkers) stopAll() {
	for i := range w.procs {
		w.mu.Lock()
		cmd, done := w.procs[i], w.exited[i]
		w.mu.Unlock()
		if cmd == nil {
			continue
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, in its log
			<-done
			w.t.Errorf("worker %d did not close within 20s of SIGTERM", i)
		}
	}
}

// count counts the lines of the workers' logs that contain s.
func (w *chaosWorkers) count(s string) int {
	files, _ := os.ReadDir(w.logs)
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(w.logs + "/" + f.Name())
		n += bytes.Count(b, []byte(s))
	}
	return n
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// chaosWorker is the main of a worker process: the two actors, until
// SIGTERM, dying at its point now and then.
func chaosWorker(schema string) {
	point := os.Getenv(chaosKillAtEnv)
	var calm atomic.Bool
	calmed := make(chan os.Signal, 1)
	signal.Notify(calmed, syscall.SIGUSR1)
	go func() {
		<-calmed
		calm.Store(true)
	}()
	die := func(p string) {
		if p == point && !calm.Load() && rand.IntN(400) == 0 {
			fmt.Println("chaos: killed at " + p)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	faultHook = die
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		os.Exit(2)
	}
	cfg, err := pgpool.ParseConfig(os.Getenv(testenv.PostgresVar))
	if err != nil {
		fail(err)
	}
	cfg.Pool.MaxObjects = 10
	pool, err := pgpool.NewWithConfig(cfg)
	if err != nil {
		fail(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	conf := Config[int]{
		Schema: schema, Workers: 8, Lease: chaosLease, Heartbeat: chaosLease / 4, PollInterval: 100 * time.Millisecond,
		MaxAttempts: 3, MaxLost: 1000, Logger: log, OnError: func(e *actor.TaskError) { log.Warn("task failed", "error", e) },
	}
	effect := expand(schema, `INSERT INTO {s}.effects VALUES ($1)`)
	run := expand(schema, `INSERT INTO {s}.runs VALUES ($1)`)
	txActor, err := New(ctx, pool, "chaos_tx", func(ctx context.Context, task actor.Task[int]) error {
		tx, err := Tx(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, effect, int64(task.ID)); err != nil {
			return err
		}
		die("handler")
		return nil
	}, conf)
	if err != nil {
		fail(err)
	}
	plainActor, err := New(ctx, pool, "chaos_plain", func(ctx context.Context, task actor.Task[int]) error {
		if _, err := pool.Exec(ctx, run, int64(task.ID)); err != nil {
			return err
		}
		die("handler")
		return nil
	}, conf)
	if err != nil {
		fail(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := errors.Join(txActor.Close(cctx), plainActor.Close(cctx), pool.Close(cctx)); err != nil {
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		fail(err)
	}
	os.Exit(0)
}
