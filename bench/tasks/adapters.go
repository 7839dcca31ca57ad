package tasks

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/gammazero/workerpool"
	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc/pool"

	"github.com/actorpool/actorpool/actor"
)

type actorExec struct {
	a *actor.Actor[int]
}

// NewActor returns the task actor with Workers fixed workers and a mailbox
// of Capacity Queue (0: unbounded) that blocks senders when full.
func NewActor(s Spec) (Executor, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	task := s.Task
	a, err := actor.New("bench", func(context.Context, actor.Task[int]) error {
		task()
		return nil
	}, actor.Config[int]{
		Workers:  s.Workers,
		Capacity: s.Queue,
		Overflow: actor.OverflowBlock,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	return &actorExec{a: a}, nil
}

func (e *actorExec) Submit(ctx context.Context) error { return e.a.Send(ctx, 0) }
func (e *actorExec) Close() error                     { return e.a.Close(context.Background()) }

// chanExec is the floor: a buffered channel and Workers goroutines ranging
// over it.
type chanExec struct {
	ch chan int
	wg sync.WaitGroup
}

// NewChan returns a buffered channel of Queue tasks (Tasks when unbounded,
// so that no send ever blocks) served by Workers goroutines.
func NewChan(s Spec) (Executor, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	size := s.Queue
	if size == 0 {
		size = s.Tasks
	}
	e := &chanExec{ch: make(chan int, size)}
	for range s.Workers {
		e.wg.Go(func() {
			for range e.ch {
				s.Task()
			}
		})
	}
	return e, nil
}

func (e *chanExec) Submit(context.Context) error {
	e.ch <- 0
	return nil
}

func (e *chanExec) Close() error {
	close(e.ch)
	e.wg.Wait()
	return nil
}

type pondExec struct {
	p    pond.Pool
	task func()
}

// NewPond returns a pond v2 pool of Workers with a blocking queue of Queue
// tasks, or an unbounded one.
func NewPond(s Spec) (Executor, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	var opts []pond.Option
	if s.Queue > 0 {
		opts = append(opts, pond.WithQueueSize(s.Queue))
	}
	return &pondExec{p: pond.NewPool(s.Workers, opts...), task: s.Task}, nil
}

func (e *pondExec) Submit(context.Context) error { return e.p.Go(e.task) }

func (e *pondExec) Close() error {
	e.p.StopAndWait()
	return nil
}

type antsExec struct {
	p    *ants.Pool
	task func()
}

// NewAnts returns an ants v2 pool of Workers that blocks a submitter until a
// worker is free: ants has no queue.
func NewAnts(s Spec) (Executor, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	p, err := ants.NewPool(s.Workers, ants.WithLogger(discardLogger{}), ants.WithDisablePurge(true))
	if err != nil {
		return nil, err
	}
	return &antsExec{p: p, task: s.Task}, nil
}

func (e *antsExec) Submit(context.Context) error { return e.p.Submit(e.task) }

// Close waits for the workers to finish and exit; ants's Release alone
// returns with its workers still running. Purging is off: with it on,
// ReleaseTimeout waits for the purge goroutine's next tick, a second away.
func (e *antsExec) Close() error { return e.p.ReleaseTimeout(10 * time.Second) }

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

type workerpoolExec struct {
	p    *workerpool.WorkerPool
	task func()
}

// NewWorkerpool returns a gammazero/workerpool of Workers, whose queue is
// always unbounded.
func NewWorkerpool(s Spec) (Executor, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &workerpoolExec{p: workerpool.New(s.Workers), task: s.Task}, nil
}

func (e *workerpoolExec) Submit(context.Context) error {
	e.p.Submit(e.task)
	return nil
}

func (e *workerpoolExec) Close() error {
	e.p.StopWait()
	return nil
}

type concExec struct {
	p    *pool.Pool
	task func()
}

// NewConc returns a sourcegraph/conc pool limited to Workers goroutines,
// which blocks a submitter until one is free: conc has no queue.
func NewConc(s Spec) (Executor, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &concExec{p: pool.New().WithMaxGoroutines(s.Workers), task: s.Task}, nil
}

func (e *concExec) Submit(context.Context) error {
	e.p.Go(e.task)
	return nil
}

func (e *concExec) Close() error {
	e.p.Wait()
	return nil
}
