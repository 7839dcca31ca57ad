package workload

import (
	"fmt"
	"time"
)

// The contended matrix of the comparison.
var (
	Goroutines = []int{4, 16, 64, 256, 1024}
	Sizes      = []int{8, 64}
	Holds      = []time.Duration{0, time.Microsecond}
)

// A Cell is one point of the contended matrix.
type Cell struct {
	Size       int
	Hold       time.Duration
	Goroutines int
}

// Cells returns the contended matrix, size first, then hold, then the
// number of goroutines, so that one line of a chart is a run of cells.
func Cells() []Cell {
	var cells []Cell
	for _, s := range Sizes {
		for _, h := range Holds {
			for _, g := range Goroutines {
				cells = append(cells, Cell{Size: s, Hold: h, Goroutines: g})
			}
		}
	}
	return cells
}

// Name returns the cell's benchmark name, such as
// "size=8/hold=1us/goroutines=64".
func (c Cell) Name() string {
	return fmt.Sprintf("size=%d/hold=%s/goroutines=%d", c.Size, HoldName(c.Hold), c.Goroutines)
}

// HoldName writes a hold as benchmark names carry it: "0" or "1us", with no
// character that a shell or benchstat's filter would trip on.
func HoldName(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	case d%time.Microsecond == 0:
		return fmt.Sprintf("%dus", d/time.Microsecond)
	}
	return fmt.Sprintf("%dns", d.Nanoseconds())
}
