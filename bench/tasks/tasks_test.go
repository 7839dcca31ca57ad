package tasks

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// TestEveryExecutorRunsEveryTask submits tasks from several producers to
// each executor in each mode it offers and checks that each task ran once,
// that no more than Workers ran at once, and that Close left no goroutine.
func TestEveryExecutorRunsEveryTask(t *testing.T) {
	for _, c := range All() {
		for _, m := range []Mode{Bounded, Unbounded} {
			if c.Modes&m == 0 {
				continue
			}
			t.Run(c.Name+"/"+m.String(), func(t *testing.T) {
				const workers, producers, perProducer = 3, 8, 200
				before := leakcheck.Take()
				var ran, running, most atomic.Int64
				task := func() {
					n := running.Add(1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					runtime.Gosched()
					running.Add(-1)
					ran.Add(1)
				}
				queue := 0
				if m == Bounded {
					queue = 16
				}
				e, err := c.New(Spec{Workers: workers, Queue: queue, Tasks: producers * perProducer, Task: task})
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, producers)
				for range producers {
					go func() {
						for range perProducer {
							if err := e.Submit(t.Context()); err != nil {
								done <- err
								return
							}
						}
						done <- nil
					}()
				}
				for range producers {
					if err := <-done; err != nil {
						t.Fatalf("Submit: %v", err)
					}
				}
				if err := e.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if got := ran.Load(); got != producers*perProducer {
					t.Errorf("%d tasks ran, want %d", got, producers*perProducer)
				}
				if got := most.Load(); got > workers {
					t.Errorf("%d tasks ran at once, want at most %d workers", got, workers)
				}
				before.Check(t)
			})
		}
	}
}

func TestCellsCoverTheMatrix(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	cells := Cells()
	seen := map[string]bool{}
	for _, c := range cells {
		seen[c.Name()] = true
	}
	for _, m := range []Mode{Bounded, Unbounded} {
		for _, w := range Works {
			for _, p := range []int{1, procs, 64, 1024} {
				for _, n := range []int{1, procs, 8 * procs} {
					name := Cell{Mode: m, Work: w, Producers: p, Workers: n}.Name()
					if !seen[name] {
						t.Errorf("Cells() lacks %s", name)
					}
				}
			}
		}
	}
	if len(seen) != len(cells) {
		t.Errorf("Cells() has %d cells but %d names: a cell is repeated", len(cells), len(seen))
	}
}

func TestSpecValidation(t *testing.T) {
	ok := Spec{Workers: 1, Task: func() {}}
	tests := []struct {
		name  string
		mod   func(*Spec)
		field string
	}{
		{"no workers", func(s *Spec) { s.Workers = 0 }, "Workers"},
		{"negative queue", func(s *Spec) { s.Queue = -1 }, "Queue"},
		{"negative tasks", func(s *Spec) { s.Tasks = -1 }, "Tasks"},
		{"no task", func(s *Spec) { s.Task = nil }, "Task"},
	}
	for _, c := range All() {
		for _, tt := range tests {
			s := ok
			tt.mod(&s)
			if _, err := c.New(s); err == nil || !strings.Contains(err.Error(), "Spec."+tt.field) {
				t.Errorf("%s: New with %s: error = %v, want one naming Spec.%s", c.Name, tt.name, err, tt.field)
			}
		}
	}
}
