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
	"regexp"
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
	chaosRoundsEnv = "PGACTOR_CHAOS_ROUNDS" // the worker's Config.Rounds
	chaosLease     = time.Second
)

// chaosPoints are the named points, and "" for a worker killed only at
// random moments.
var chaosPoints = []string{"handler", "handled", "commit", "fetched", ""}

// chaosTasks is how many tasks the producers send: PGACTOR_CHAOS_TASKS, or
// 20,000, or 10,000 under the race detector, which slows the workers
// severalfold, to keep the test within about a minute.
func chaosTasks() int {
	if n, err := strconv.Atoi(os.Getenv("PGACTOR_CHAOS_TASKS")); err == nil && n > 0 {
		return n
	}
	if raceEnabled {
		return 10000
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
				if i%3 == 0 {
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
			}
		})
	}

	// Chaos, while the producers send and for a while after.
	began := time.Now()
	frozen := false
	for step := 0; ; step++ {
		time.Sleep(time.Duration(400+rand.IntN(600)) * time.Millisecond)
		w.restartExited()
		if waitTimeout(&producers, 0) && time.Since(began) > 8*time.Second {
			break
		}
		if !frozen && step == 3 {
			frozen = true
			w.freeze(r, txSender, func(id uint64) {
				mu.Lock()
				acked["chaos_tx"][id] = true
				mu.Unlock()
			})
			continue
		}
		w.kill(rand.IntN(3))
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
	refused := w.count("result refused|after its lease was lost")
	t.Logf("%v: %d workers killed at random, %d at their fault point; %d re-runs of plain tasks; %d late results refused or dropped",
		time.Since(began).Round(time.Second), w.killed.Load(), w.selfKilled.Load(), reruns, refused)
	if w.selfKilled.Load() == 0 || w.killed.Load() == 0 {
		t.Errorf("no worker was killed (%d at random, %d at a fault point): the test tested nothing", w.killed.Load(), w.selfKilled.Load())
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
	// Processes keep 2, 3 or 4 rounds in flight, by turns.
	rounds := []int{0, 3, 4}[w.gen%3]
	cmd.Env = append(os.Environ(), chaosEnv+"="+w.schema, chaosKillAtEnv+"="+point, testenv.PostgresVar+"="+w.dsn,
		fmt.Sprintf("%s=%d", chaosRoundsEnv, rounds))
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

// freeze has a worker take a marked task of the Tx actor, stops that
// worker (SIGSTOP) in the task's handler, after its write, until another
// worker has taken the task over, and lets it go on (SIGCONT) while the
// other still runs it: its completion must be refused — the task is the
// other's now — and its write rolled back.
func (w *chaosWorkers) freeze(r *rig, tx *Actor[int], sent func(uint64)) {
	id, err := tx.Send(context.Background(), chaosMarker, Priority(10))
	if err != nil {
		w.t.Fatal(err)
	}
	sent(id)
	holding := regexp.MustCompile(fmt.Sprintf(`chaos: holding task %d in process (\d+)`, id))
	holders := func() []*exec.Cmd {
		w.mu.Lock()
		defer w.mu.Unlock()
		var cmds []*exec.Cmd
		for _, b := range w.readLogs() {
			for _, m := range holding.FindAllSubmatch(b, -1) {
				pid, _ := strconv.Atoi(string(m[1]))
				for _, c := range w.procs {
					if c.Process.Pid == pid {
						cmds = append(cmds, c)
					}
				}
			}
		}
		return cmds
	}
	var frozen *exec.Cmd
	eventually(w.t, 30*time.Second, "a worker took the marked task", func() bool {
		w.restartExited()
		if h := holders(); len(h) > 0 {
			frozen = h[0]
			return true
		}
		return false
	})
	frozen.Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	eventually(w.t, 60*time.Second, "another worker took the marked task over", func() bool {
		w.restartExited()
		return len(holders()) > 1
	})
	frozen.Process.Signal(syscall.SIGCONT)
	log := frozen.Stdout.(*os.File).Name()
	refused := regexp.MustCompile(fmt.Sprintf(`result refused[^\n]*task_id=%d\b`, id))
	eventually(w.t, 30*time.Second, "the thawed worker's completion refused", func() bool {
		b, _ := os.ReadFile(log)
		return refused.Match(b)
	})
	eventually(w.t, 30*time.Second, "the marked task completed", func() bool {
		return r.count(`SELECT count(*) FROM {s}.tasks WHERE id = $1`, int64(id)) == 0
	})
	if n := r.count(`SELECT count(*) FROM {s}.effects WHERE task = $1`, int64(id)); n != 1 {
		w.t.Errorf("the marked task left %d effects, want 1", n)
	}
	w.t.Logf("a worker frozen for %v in the handler of task %d had its completion refused: another held the task", time.Since(stopped).Round(time.Millisecond), id)
}

// chaosMarker is the payload of the task a worker is frozen in.
const chaosMarker = -1

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

// count counts the matches of the regular expression re in the workers'
// logs.
func (w *chaosWorkers) count(re string) int {
	n := 0
	rx := regexp.MustCompile(re)
	for _, b := range w.readLogs() {
		n += len(rx.FindAll(b, -1))
	}
	return n
}

// find returns the first match of re in the workers' logs, or "".
func (w *chaosWorkers) find(re string) string {
	rx := regexp.MustCompile(re)
	for _, b := range w.readLogs() {
		if m := rx.Find(b); m != nil {
			return string(m)
		}
	}
	return ""
}

func (w *chaosWorkers) readLogs() [][]byte {
	files, _ := os.ReadDir(w.logs)
	var logs [][]byte
	for _, f := range files {
		b, _ := os.ReadFile(w.logs + "/" + f.Name())
		logs = append(logs, b)
	}
	return logs
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
	// The worker dies at its point's k-th passing, k small and random, so
	// that it gets there before the parent kills it at random, however
	// slow a loaded machine makes it.
	var left atomic.Int64
	left.Store(int64(1 + rand.IntN(30)))
	die := func(p string) {
		if p == point && !calm.Load() && left.Add(-1) == 0 {
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
	cfg.MaxConns = int32(14) // up to 4 rounds for each actor, and the Tx handlers' transactions
	pool, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		fail(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rounds, err := strconv.Atoi(os.Getenv(chaosRoundsEnv))
	if err != nil {
		fail(err)
	}
	conf := Config[int]{
		Schema: schema, Workers: 8, Rounds: rounds, Lease: chaosLease, Heartbeat: chaosLease / 4, PollInterval: 100 * time.Millisecond,
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
		if task.Payload == chaosMarker {
			// The test freezes the first process to say this, and thaws
			// it once another has completed the task; it must not die
			// first.
			calm.Store(true)
			fmt.Printf("chaos: holding task %d in process %d\n", task.ID, os.Getpid())
			time.Sleep(5 * chaosLease) // the first to hold it is frozen meanwhile, and thawed while the next holds it
			return nil
		}
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond) // some work: a frozen worker is caught in it
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
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
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
	if err := errors.Join(txActor.Close(cctx), plainActor.Close(cctx), pool.Shutdown(cctx)); err != nil {
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		fail(err)
	}
	os.Exit(0)
}
