package main

import (
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/actorpool/actorpool/bench/tasks"
)

// taskResults holds every metric of the task comparison, by cell and
// executor.
type taskResults struct {
	execs []tasks.Contender
	cells []tasks.Cell
	runs  map[tasks.Cell]map[string]metrics
}

// runTasks runs the task matrix count times, every executor back to back
// in each cell.
func runTasks(rec source, es []tasks.Contender, count int, short bool) *taskResults {
	res := &taskResults{execs: es, runs: map[tasks.Cell]map[string]metrics{}}
	for _, cell := range tasks.Cells() {
		if short && cell.Producers > 64 {
			continue
		}
		res.cells = append(res.cells, cell)
		res.runs[cell] = map[string]metrics{}
	}
	for range count {
		for _, cell := range res.cells {
			for _, c := range es {
				if c.Modes&cell.Mode == 0 {
					continue
				}
				r, ok := rec.run("Tasks/"+cell.Name()+"/exec="+c.Name, func(b *testing.B) { tasks.Run(b, c, cell) })
				if !ok {
					continue
				}
				if res.runs[cell][c.Name] == nil {
					res.runs[cell][c.Name] = metrics{}
				}
				res.runs[cell][c.Name].add(r)
			}
		}
	}
	return res
}

func printTaskTables(w io.Writer, r *taskResults) {
	for _, mode := range []tasks.Mode{tasks.Bounded, tasks.Unbounded} {
		var names []string
		for _, c := range r.execs {
			if c.Modes&mode != 0 {
				names = append(names, c.Name)
			}
		}
		fmt.Fprintf(w, "## Tasks, %s queue: ns per task, submit to completion (ratio to the actor)\n\n", mode)
		var rows [][]string
		for _, cell := range r.cells {
			if cell.Mode != mode {
				continue
			}
			row := []string{cell.Work.Name, fmt.Sprint(cell.Producers), fmt.Sprint(cell.Workers)}
			b := r.runs[cell][tasks.Baseline].get("ns/op")
			for _, n := range names {
				v := r.runs[cell][n].get("ns/op")
				row = append(row, fmt.Sprintf("%s (%s)", num(v, 0), ratio(v, b)))
			}
			row = append(row, num(r.runs[cell][tasks.Baseline].get("allocs/op"), 0))
			rows = append(rows, row)
		}
		table(w, append(append([]string{"work", "producers", "workers"}, names...), "actor allocs/op"), rows)
	}
	printTaskGoals(w, r)
}

func printTaskGoals(w io.Writer, r *taskResults) {
	fmt.Fprintf(w, "## Goals of the task actor (issue 4)\n\n")
	var floorMet, pondMet, allocMet, floorN, pondN, allocN int
	var floorMiss, pondMiss []string
	worst := 0.0
	for _, cell := range r.cells {
		m := r.runs[cell]
		a := m[tasks.Baseline].get("ns/op")
		if math.IsNaN(a) {
			continue
		}
		if f := m[tasks.Floor].get("ns/op"); !math.IsNaN(f) {
			floorN++
			worst = math.Max(worst, a/f)
			if a <= 1.25*f {
				floorMet++
			} else {
				floorMiss = append(floorMiss, fmt.Sprintf("%s: %s the floor", cell.Name(), ratio(a, f)))
			}
		}
		if p := m["pond"].get("ns/op"); !math.IsNaN(p) {
			pondN++
			if a <= p {
				pondMet++
			} else {
				pondMiss = append(pondMiss, fmt.Sprintf("%s: %s pond", cell.Name(), ratio(a, p)))
			}
		}
		if cell.Mode == tasks.Bounded {
			allocN++
			if m[tasks.Baseline].get("allocs/op") == 0 {
				allocMet++
			}
		}
	}
	table(w, []string{"goal", "measured", ""}, [][]string{
		{"≤ 1.25× the channel floor, every cell", fmt.Sprintf("%d of %d cells; worst %.2f×", floorMet, floorN, worst), mark(floorMet == floorN)},
		{"≤ pond, every cell", fmt.Sprintf("%d of %d cells", pondMet, pondN), mark(pondMet == pondN)},
		{"0 allocs per bounded Send", fmt.Sprintf("%d of %d bounded cells at 0 allocs/op", allocMet, allocN), mark(allocMet == allocN)},
	})
	for _, list := range []struct {
		title string
		items []string
	}{
		{"Cells over 1.25× the channel floor", floorMiss},
		{"Cells slower than pond", pondMiss},
	} {
		if len(list.items) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (the actor's time per task as a ratio):\n\n", list.title)
		for _, s := range list.items {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	}
}
