package pgactor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgpool"
)

// The periodic test runs an actor with a schedule in three processes —
// this test binary, re-run with periodicEnv set — each of which
// registers the schedule as it starts, as a service's replicas would,
// and says on its output each task its scheduler sent. The test kills the
// process that sent the latest one, lets the others go on for several
// periods, and counts the tasks of each period in the database.
const (
	periodicEnv    = "PGACTOR_PERIODIC_WORKER" // the schema; set in worker processes
	periodicDieEnv = "PGACTOR_PERIODIC_DIE"    // set: the worker kills itself the first time its scheduler sends a task, before it commits
)

// periodicWorker is the body of a worker process: it runs until SIGTERM.
func periodicWorker(schema string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "periodic worker:", err)
		os.Exit(2)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	pool, err := pgpool.New(context.Background(), os.Getenv(testenv.PostgresVar))
	if err != nil {
		fail(err)
	}
	if os.Getenv(periodicDieEnv) != "" {
		faultHook = func(point string) {
			if point == pointFired {
				fmt.Println("periodic: dying")
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
	}
	scheduledHook = func(_, name string, period time.Time, _ uint64) {
		fmt.Printf("periodic: sent %s %d\n", name, period.Unix())
	}
	a, err := New(context.Background(), pool, "periodic", nil, Config[int]{Schema: schema, PollInterval: 100 * time.Millisecond})
	if err != nil {
		fail(err)
	}
	if err := a.Schedule(context.Background(), "tick", "@every 1s", 1); err != nil {
		fail(err)
	}
	fmt.Println("periodic: ready")
	<-term
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		fail(err)
	}
	pool.Close()
	os.Exit(0)
}

// A periodicProc is a worker process and what it said.
type periodicProc struct {
	cmd    *exec.Cmd
	sent   chan int64    // the periods it sent, as Unix seconds; closed when its output ends
	exited chan struct{} // closed when it exited
	err    error         // how it exited, once it has
}

func startPeriodic(t *testing.T, r *rig, die bool) *periodicProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), periodicEnv+"="+r.schema, testenv.PostgresVar+"="+r.dsn)
	if die {
		cmd.Env = append(cmd.Env, periodicDieEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &periodicProc{cmd: cmd, sent: make(chan int64, 1000), exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer close(p.sent)
		s := bufio.NewScanner(out)
		for s.Scan() {
			line := s.Text()
			if line == "periodic: ready" {
				close(ready)
			}
			if rest, ok := strings.CutPrefix(line, "periodic: sent tick "); ok {
				n, _ := strconv.ParseInt(rest, 10, 64)
				p.sent <- n
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	select {
	case <-ready:
	case <-p.exited:
		t.Fatalf("a worker process exited as it started: %v", p.err)
	case <-time.After(30 * time.Second):
		t.Fatal("a worker process did not start within 30s")
	}
	return p
}

// TestPeriodicKill is issue 21's test: three processes run a schedule
// firing every second. The first kills itself (SIGKILL) the first time its
// scheduler sends a task, before its transaction commits, holding the
// schedule's row; then the test kills the process that sent the latest
// period; the last one goes on alone. Every period from the first to the
// last must have exactly one task: none missing, none doubled.
func TestPeriodicKill(t *testing.T) {
	r := newRig(t)
	procs := make([]*periodicProc, 3)
	for i := range procs {
		procs[i] = startPeriodic(t, r, i == 0)
	}
	// Each sent period, and who sent it, as the processes tell.
	type event struct {
		proc   int
		period int64
	}
	events := make(chan event, 1000)
	for i, p := range procs {
		go func() {
			for n := range p.sent {
				events <- event{i, n}
			}
		}()
	}
	next := func() event {
		t.Helper()
		return within(t, events, 30*time.Second, "no period sent for 30s")
	}
	// The first process dies the first time its scheduler wins a period;
	// with three racing for each, it wins one of the first 60 but once
	// in 10¹⁰ runs.
	seen := 0
	for dead := false; !dead; {
		select {
		case <-procs[0].exited:
			dead = true
		case <-events:
			if seen++; seen > 60 {
				t.Fatal("the first process won no period of 60")
			}
		}
	}
	if ws, ok := procs[0].cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the first process exited, but not by its SIGKILL: %v", procs[0].err)
	}
	var e event
	for range 2 {
		e = next()
	}
	killed := procs[e.proc]
	killed.cmd.Process.Kill()
	<-killed.exited
	t.Logf("killed process %d, which sent period %d", e.proc, e.period)
	for after := 0; after < 5; {
		if e := next(); procs[e.proc] != killed {
			after++
		}
	}
	for _, p := range procs[1:] {
		if p != killed {
			p.cmd.Process.Signal(syscall.SIGTERM)
			<-p.exited
			if p.err != nil {
				t.Errorf("a worker process: %v", p.err)
			}
		}
	}
	counts := r.periodCounts("periodic", "tick")
	if len(counts) < 7 { // the first's, re-sent by another, and the 2 and 5 after
		t.Errorf("%d periods sent, want at least 7: %v", len(counts), counts)
	}
	checkOnePerPeriod(t, counts, time.Second)
}
