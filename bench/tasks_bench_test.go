package bench_test

import (
	"testing"

	"github.com/actorpool/actorpool/bench/tasks"
)

// BenchmarkTasks runs the task matrix: every executor back to back in each
// cell, skipping the queue modes an executor lacks. Under -short it runs
// only the cells with at most 64 producers.
func BenchmarkTasks(b *testing.B) {
	for _, cell := range tasks.Cells() {
		if testing.Short() && cell.Producers > 64 {
			continue
		}
		b.Run(cell.Name(), func(b *testing.B) {
			for _, c := range tasks.All() {
				if c.Modes&cell.Mode == 0 {
					continue
				}
				b.Run("exec="+c.Name, func(b *testing.B) { tasks.Run(b, c, cell) })
			}
		})
	}
}
