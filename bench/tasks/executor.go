package tasks

import (
	"context"
	"fmt"

	"github.com/actorpool/actorpool/bench/internal/pick"
)

// An Executor runs tasks submitted to it on a set of workers.
type Executor interface {
	// Submit hands the executor one task. It blocks as the executor does
	// when its queue is full.
	Submit(ctx context.Context) error
	// Close waits for the submitted tasks to finish and for the workers to
	// exit.
	Close() error
}

// Spec is what every executor is built from.
type Spec struct {
	// Workers is how many tasks run at once.
	Workers int
	// Queue bounds the tasks waiting for a worker; 0 means unbounded.
	Queue int
	// Tasks is how many tasks the run will submit: the unbounded channel
	// floor sizes its buffer with it.
	Tasks int
	// Task is what every task does. It is called once per submitted task.
	Task func()
}

func (s Spec) validate() error {
	switch {
	case s.Workers < 1:
		return fmt.Errorf("tasks: Spec.Workers is %d; it must be at least 1", s.Workers)
	case s.Queue < 0:
		return fmt.Errorf("tasks: Spec.Queue is %d; it must be 0 (unbounded) or more", s.Queue)
	case s.Tasks < 0:
		return fmt.Errorf("tasks: Spec.Tasks is %d; it must not be negative", s.Tasks)
	case s.Task == nil:
		return fmt.Errorf("tasks: Spec.Task is nil; it must be set")
	}
	return nil
}

// Mode is a queue semantics an executor offers.
type Mode uint8

const (
	// Bounded: producers block while Queue tasks wait.
	Bounded Mode = 1 << iota
	// Unbounded: producers never block.
	Unbounded
)

func (m Mode) String() string {
	switch m {
	case Bounded:
		return "bounded"
	case Unbounded:
		return "unbounded"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// A Contender is an executor under comparison.
type Contender struct {
	// Name names it in benchmark names and tables.
	Name string
	// Modes are the queue semantics it offers.
	Modes Mode
	// New builds it for one run.
	New func(s Spec) (Executor, error)
}

// Baseline is the name of the executor the others are compared with, and
// Floor the name of the channel floor.
const (
	Baseline = "actor"
	Floor    = "chan"
)

// All returns every executor under comparison, the actor first.
func All() []Contender {
	return []Contender{
		{Name: "actor", Modes: Bounded | Unbounded, New: NewActor},
		{Name: "chan", Modes: Bounded | Unbounded, New: NewChan},
		{Name: "pond", Modes: Bounded | Unbounded, New: NewPond},
		{Name: "ants", Modes: Bounded, New: NewAnts},
		{Name: "workerpool", Modes: Unbounded, New: NewWorkerpool},
		{Name: "conc", Modes: Bounded, New: NewConc},
	}
}

// Select returns the executors named in a comma-separated list, in the
// order of All, or all of them for an empty list.
func Select(list string) ([]Contender, error) {
	cs, err := pick.Named(All(), func(c Contender) string { return c.Name }, list, "executor")
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	return cs, nil
}
