package tasks

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/internal/spin"
	"github.com/actorpool/actorpool/bench/internal/split"
)

// QueueBound is the queue of the bounded runs.
const QueueBound = 256

// A Work is what every task of a run does.
type Work struct {
	Name string
	// Hold is how long a task takes: 0 for nothing, else CPU work or a
	// wait, as CPU says.
	Hold time.Duration
	CPU  bool
}

// The works of the matrix.
var (
	Noop    = Work{Name: "noop"}
	CPU1us  = Work{Name: "cpu-1us", Hold: time.Microsecond, CPU: true}
	Wait1ms = Work{Name: "wait-1ms", Hold: time.Millisecond}
	Works   = []Work{Noop, CPU1us, Wait1ms}
)

// fn returns the function that does w.
func (w Work) fn() func() {
	switch {
	case w.Hold == 0:
		return func() {}
	case w.CPU:
		n := spin.Iterations(w.Hold)
		return func() { spin.Run(n) }
	}
	d := w.Hold
	return func() { time.Sleep(d) }
}

// A Cell is one point of the task matrix.
type Cell struct {
	Mode      Mode
	Work      Work
	Producers int
	Workers   int
}

// Name returns the cell's benchmark name, such as
// "queue=bounded/work=noop/producers=64/workers=2".
func (c Cell) Name() string {
	return fmt.Sprintf("queue=%s/work=%s/producers=%d/workers=%d", c.Mode, c.Work.Name, c.Producers, c.Workers)
}

// Cells returns the task matrix for the current GOMAXPROCS: producers 1,
// GOMAXPROCS, 64 and 1,024; workers 1, GOMAXPROCS and 8×GOMAXPROCS; each
// work; bounded, then unbounded.
func Cells() []Cell {
	procs := runtime.GOMAXPROCS(0)
	producers := dedupe([]int{1, procs, 64, 1024})
	workers := dedupe([]int{1, procs, 8 * procs})
	var cells []Cell
	for _, m := range []Mode{Bounded, Unbounded} {
		for _, w := range Works {
			for _, p := range producers {
				for _, n := range workers {
					cells = append(cells, Cell{Mode: m, Work: w, Producers: p, Workers: n})
				}
			}
		}
	}
	return cells
}

func dedupe(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// Run submits b.N tasks of cell.Work to a new executor of c's, split evenly
// between cell.Producers goroutines, and times from the first submit until
// the last task has finished; ns/op is the cost of one task, submit and
// completion. It also reports tasks/s. The executor's shutdown is not
// timed.
func Run(b *testing.B, c Contender, cell Cell) {
	if c.Modes&cell.Mode == 0 {
		b.Skipf("%s has no %s queue", c.Name, cell.Mode)
	}
	work := cell.Work.fn()
	var left atomic.Int64
	left.Store(int64(b.N))
	finished := make(chan struct{})
	task := func() {
		work()
		if left.Add(-1) == 0 {
			close(finished)
		}
	}
	queue := 0
	if cell.Mode == Bounded {
		queue = QueueBound
	}
	e, err := c.New(Spec{Workers: cell.Workers, Queue: queue, Tasks: b.N, Task: task})
	if err != nil {
		b.Fatalf("%s: %v", c.Name, err)
	}
	ctx := context.Background()
	errs := make([]error, cell.Producers)
	split.Run(b, cell.Producers, func(i, n int) {
		for range n {
			if err := e.Submit(ctx); err != nil {
				errs[i] = err
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			b.Fatalf("%s: Submit: %v", c.Name, err)
		}
	}
	<-finished
	b.StopTimer()
	if err := e.Close(); err != nil {
		b.Errorf("%s: Close: %v", c.Name, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}
