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

// The environment of the recovery cell's child.
const (
	childKindVar   = "ACTORPOOL_QUEUES_CHILD" // the kind's name; set only in a child
	childDSNVar    = "ACTORPOOL_QUEUES_DSN"
	childSchemaVar = "ACTORPOOL_QUEUES_SCHEMA"
	childRescueVar = "ACTORPOOL_QUEUES_RESCUE"
	childNATSVar   = "ACTORPOOL_QUEUES_NATS"
)

// childStarted is the line a child writes when its handler has begun.
const childStarted = "started"

// MaybeChild returns at once unless this process was started as the
// recovery cell's child or a processes cell's; then it runs as that child
// and exits. The recovery cell's child runs workers on the queue its
// environment names, says when a handler begins, and never returns: its
// handler blocks until the parent kills the process. It also exits when
// its standard input closes, so that a child whose parent died does not
// linger. A processes cell's child is workerChild.
func MaybeChild() {
	name := os.Getenv(childKindVar)
	if name == "" {
		return
	}
	run := child
	if w := os.Getenv(childWorkersVar); w != "" {
		run = func(name string) error {
			workers, err := strconv.Atoi(w)
			if err != nil {
				return fmt.Errorf("%s: %w", childWorkersVar, err)
			}
			return workerChild(name, workers)
		}
	}
	if err := run(name); err != nil {
		fmt.Fprintf(os.Stderr, "queues child: %v\n", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// childCommand returns the command that runs this binary again as a
// child of kind k on the queue o (a queue's ChildOptions) names, with the
// variables in extra besides.
func childCommand(ctx context.Context, k Kind, o Options, extra ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(),
		childKindVar+"="+k.Name, childDSNVar+"="+o.DSN, childSchemaVar+"="+o.Schema, childRescueVar+"="+o.Rescue.String(),
		childNATSVar+"="+o.NATS)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd, nil
}

// openChildQueue opens, in a child, the queue of kind name that the
// child's environment names, attached to its parent's.
func openChildQueue(ctx context.Context, name string) (Queue, error) {
	k, err := KindNamed(name)
	if err != nil {
		return nil, err
	}
	rescue, err := time.ParseDuration(os.Getenv(childRescueVar))
	if err != nil {
		return nil, err
	}
	return Open(ctx, k, Options{
		DSN: os.Getenv(childDSNVar), Schema: os.Getenv(childSchemaVar), NATS: os.Getenv(childNATSVar),
		Rescue: rescue, Attach: true,
	})
}

func child(name string) error {
	ctx := context.Background()
	q, err := openChildQueue(ctx, name)
	if err != nil {
		return err
	}
	said := make(chan struct{}, 1)
	if _, err := q.Start(ctx, 4, func(int64) {
		select {
		case said <- struct{}{}:
			fmt.Println(childStarted)
		default:
		}
		select {} // a handler stuck until the process dies
	}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return errors.New("standard input closed before the parent killed this child")
}

// RecoveryResult is what the recovery cell measures.
type RecoveryResult struct {
	// After is the time from the SIGKILL to the task's handler beginning
	// again in another process; the cap when Recovered is false.
	After     time.Duration
	Recovered bool
}

// Recovery inserts one task into q, of kind k, starts a child process
// that opens q as q.ChildOptions says and whose worker takes the task and
// blocks in its handler, starts workers in this process, kills the child
// with SIGKILL, and returns the time until this process's workers run the
// task, or the cap.
func Recovery(ctx context.Context, q Queue, k Kind, cap time.Duration) (res RecoveryResult, err error) {
	if err := q.InsertBatch(ctx, []int64{1}); err != nil {
		return res, err
	}
	cmd, err := childCommand(ctx, k, q.ChildOptions())
	if err != nil {
		return res, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	started := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == childStarted {
				started <- nil
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		started <- fmt.Errorf("the child ended before its handler began: %v", sc.Err())
	}()
	select {
	case err := <-started:
		if err != nil {
			return res, err
		}
	case <-time.After(time.Minute):
		return res, errors.New("the child's handler did not begin within a minute")
	}

	ran := make(chan time.Time, 1)
	stop, err := q.Start(context.WithoutCancel(ctx), 4, func(int64) {
		select {
		case ran <- time.Now():
		default:
		}
	})
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stop(context.WithoutCancel(ctx))) }()

	if err := cmd.Process.Kill(); err != nil {
		return res, err
	}
	killedAt := time.Now()
	killed = true
	_ = cmd.Wait() // killed: its error says so
	select {
	case at := <-ran:
		return RecoveryResult{After: at.Sub(killedAt), Recovered: true}, nil
	case <-time.After(cap):
		return RecoveryResult{After: cap}, nil
	case <-ctx.Done():
		return res, ctx.Err()
	}
}
