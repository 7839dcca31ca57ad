package queues

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// childWorkersVar, set only in a child of the processes cell, is how many
// workers the child runs.
const childWorkersVar = "ACTORPOOL_QUEUES_WORKERS"

// What a processes cell's child and its parent say to each other, a line
// each: the child that has opened its queue says childReady; the parent
// says childGo to every child at once, and closes the child's standard
// input for it to stop.
const (
	childReady = "ready"
	childGo    = "go"
)

// workerChild is the main of a processes cell's child: it opens the queue
// of kind name as its environment says, says it is ready, starts workers
// with handlers that do nothing once the parent says go, and stops them
// and returns when its standard input closes.
func workerChild(name string, workers int) error {
	ctx := context.Background()
	q, err := openChildQueue(ctx, name)
	if err != nil {
		return err
	}
	fmt.Println(childReady)
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != childGo {
		return errors.Join(errors.New("the parent did not say go"), in.Err(), q.Close(ctx))
	}
	stop, err := q.Start(ctx, workers, func(int64) {})
	if err != nil {
		return errors.Join(err, q.Close(ctx))
	}
	for in.Scan() {
	}
	return errors.Join(stop(ctx), q.Close(ctx))
}

// A worker process of the processes cell, seen from its parent.
type workerProcess struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	drained chan struct{} // closed once the child's standard output has ended
}

// startWorkerProcess starts this binary again as a child running workers
// on the queue that o (q's ChildOptions) names, and waits until it says
// it is ready.
func startWorkerProcess(ctx context.Context, k Kind, o Options, workers int) (*workerProcess, error) {
	cmd, err := childCommand(ctx, k, o, childWorkersVar+"="+strconv.Itoa(workers))
	if err != nil {
		return nil, err
	}
	p := &workerProcess{cmd: cmd, drained: make(chan struct{})}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		ready <- lines.Scan() && strings.TrimSpace(lines.Text()) == childReady
		for lines.Scan() {
		}
		close(p.drained)
	}()
	select {
	case ok := <-ready:
		if ok {
			return p, nil
		}
		err = errors.New("the worker process ended before it was ready")
	case <-time.After(time.Minute):
		err = errors.New("the worker process was not ready within a minute")
	}
	p.kill()
	return nil, err
}

// stop closes the child's standard input, for it to stop its workers, and
// waits for it to exit, for at most a minute.
func (p *workerProcess) stop() error {
	p.stdin.Close()
	select {
	case <-p.drained:
		return p.cmd.Wait()
	case <-time.After(time.Minute):
		p.kill()
		return errors.New("the worker process did not stop within a minute")
	}
}

// kill ends the child at once.
func (p *workerProcess) kill() {
	p.stdin.Close()
	_ = p.cmd.Process.Kill()
	<-p.drained
	_ = p.cmd.Wait()
}

// Processes pre-inserts n no-op tasks, starts procs worker processes of
// workers workers each on q, of kind k, and, once every one has opened the
// queue, tells them all to start; it returns how many tasks per second
// they worked together, from that moment until the last completion was
// committed. It measures what processes sharing one queue add.
func Processes(ctx context.Context, q Queue, k Kind, n, procs, workers int) (perSec float64, err error) {
	if err := q.InsertBatch(ctx, make([]int64, n)); err != nil {
		return 0, err
	}
	o := q.ChildOptions()
	var ps []*workerProcess
	defer func() {
		for _, p := range ps {
			err = errors.Join(err, p.stop())
		}
	}()
	for range procs {
		p, err := startWorkerProcess(ctx, k, o, workers)
		if err != nil {
			return 0, err
		}
		ps = append(ps, p)
	}
	begin := time.Now()
	for _, p := range ps {
		if _, err := fmt.Fprintln(p.stdin, childGo); err != nil {
			return 0, err
		}
	}
	if err := waitDrained(ctx, q); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(begin).Seconds(), nil
}
