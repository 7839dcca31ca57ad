package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/actorpool/actorpool/bench/pools"
	"github.com/actorpool/actorpool/bench/workload"
)

var nan = math.NaN()

// poolResults holds every metric of the pool comparison, by workload, cell
// and pool.
type poolResults struct {
	pools       []pools.Contender
	uncontended map[string]metrics
	direct      map[string]metrics
	cells       []workload.Cell
	contended   map[workload.Cell]map[string]metrics
	slow        map[string]metrics
	fair        map[string]metrics
}

// hasContended reports whether any contended run was recorded.
func (r *poolResults) hasContended() bool {
	for _, m := range r.contended {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

func (r *poolResults) kind(name string) pools.Kind {
	for _, c := range r.pools {
		if c.Name == name {
			return c.Kind
		}
	}
	return pools.Design
}

var directs = []struct {
	pool  string
	bench func(*testing.B)
}{
	{"actorpool", workload.ActorpoolDirect},
	{"puddle", workload.PuddleDirect},
	{"syncpool", workload.SyncPoolDirect},
}

// runPools runs the pool workloads count times, every pool back to back in
// each cell, and the cells in the same order each time.
func runPools(rec source, ps []pools.Contender, count int, short bool) *poolResults {
	res := &poolResults{
		pools:       ps,
		uncontended: map[string]metrics{},
		direct:      map[string]metrics{},
		contended:   map[workload.Cell]map[string]metrics{},
		slow:        map[string]metrics{},
		fair:        map[string]metrics{},
	}
	for _, cell := range workload.Cells() {
		if short && cell.Goroutines > 64 {
			continue
		}
		res.cells = append(res.cells, cell)
		res.contended[cell] = map[string]metrics{}
	}
	into := func(m map[string]metrics, pool string, r map[string]float64, ok bool) {
		if !ok {
			return
		}
		if m[pool] == nil {
			m[pool] = metrics{}
		}
		m[pool].add(r)
	}
	for range count {
		for _, c := range ps {
			r, ok := rec.run("Uncontended/pool="+c.Name, func(b *testing.B) { workload.Uncontended(b, c) })
			into(res.uncontended, c.Name, r, ok)
		}
		for _, d := range directs {
			r, ok := rec.run("UncontendedDirect/pool="+d.pool, d.bench)
			into(res.direct, d.pool, r, ok)
		}
		for _, cell := range res.cells {
			for _, c := range ps {
				r, ok := rec.run("Contended/"+cell.Name()+"/pool="+c.Name, func(b *testing.B) { workload.Contended(b, c, cell) })
				into(res.contended[cell], c.Name, r, ok)
			}
		}
		for _, c := range ps {
			r, ok := rec.run("SlowCreate/pool="+c.Name, func(b *testing.B) { workload.SlowCreate(b, c) })
			into(res.slow, c.Name, r, ok)
		}
		for _, c := range ps {
			r, ok := rec.run("Fairness/pool="+c.Name, func(b *testing.B) { workload.Fairness(b, c) })
			into(res.fair, c.Name, r, ok)
		}
	}
	return res
}

// ratio returns a/b written as "1.23×", or "–" when either is missing.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// num writes v with prec decimals, or "–" when missing.
func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func table(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
		if i > 0 {
			seps[i] = "--:"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

func printPoolTables(w io.Writer, r *poolResults) {
	base := pools.Baseline
	fmt.Fprintf(w, "## Uncontended take and give-back (one goroutine)\n\n")
	var rows [][]string
	for _, c := range r.pools {
		m := r.uncontended[c.Name]
		rows = append(rows, []string{c.Name, num(m.get("ns/op"), 1), num(m.get("allocs/op"), 0), ratio(m.get("ns/op"), r.uncontended[base].get("ns/op"))})
	}
	for _, d := range directs {
		m := r.direct[d.pool]
		rows = append(rows, []string{d.pool + ", direct", num(m.get("ns/op"), 1), num(m.get("allocs/op"), 0), ratio(m.get("ns/op"), r.direct[base].get("ns/op"))})
	}
	table(w, []string{"pool", "ns/op", "allocs/op", "time × actorpool"}, rows)

	var names []string
	for _, c := range r.pools {
		names = append(names, c.Name)
	}
	fmt.Fprintf(w, "## Contended throughput, millions of takes per second (ratio to actorpool)\n\n")
	rows = nil
	for _, cell := range r.cells {
		row := []string{fmt.Sprint(cell.Size), workload.HoldName(cell.Hold), fmt.Sprint(cell.Goroutines)}
		b := r.contended[cell][base].get("ops/s")
		for _, n := range names {
			v := r.contended[cell][n].get("ops/s")
			row = append(row, fmt.Sprintf("%s (%s)", num(v/1e6, 2), ratio(v, b)))
		}
		rows = append(rows, row)
	}
	table(w, append([]string{"size", "hold", "goroutines"}, names...), rows)

	fmt.Fprintf(w, "## Contended p99.9 latency of a take, µs (ratio to actorpool)\n\n")
	rows = nil
	for _, cell := range r.cells {
		row := []string{fmt.Sprint(cell.Size), workload.HoldName(cell.Hold), fmt.Sprint(cell.Goroutines)}
		b := r.contended[cell][base].get("p99.9-ns")
		for _, n := range names {
			v := r.contended[cell][n].get("p99.9-ns")
			row = append(row, fmt.Sprintf("%s (%s)", num(v/1e3, 1), ratio(v, b)))
		}
		rows = append(rows, row)
	}
	table(w, append([]string{"size", "hold", "goroutines"}, names...), rows)

	fmt.Fprintf(w, "## Contended, every figure\n\n")
	rows = nil
	for _, cell := range r.cells {
		b := r.contended[cell][base].get("ops/s")
		for _, n := range names {
			m := r.contended[cell][n]
			rows = append(rows, []string{
				fmt.Sprint(cell.Size), workload.HoldName(cell.Hold), fmt.Sprint(cell.Goroutines), n,
				num(m.get("ops/s")/1e6, 2), ratio(m.get("ops/s"), b),
				num(m.get("p50-ns")/1e3, 2), num(m.get("p99-ns")/1e3, 1), num(m.get("p99.9-ns")/1e3, 1), num(m.get("max-ns")/1e3, 0),
				num(m.get("allocs/op"), 0),
			})
		}
	}
	table(w, []string{"size", "hold", "goroutines", "pool", "Mops/s", "× actorpool", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "allocs/op"}, rows)

	fmt.Fprintf(w, "## Slow create: %d takers, pool of %d, creates of %v, holds of %v\n\n", workload.SlowCreateTakers, workload.SlowCreateSize, workload.SlowCreateDelay, workload.SlowCreateHold)
	rows = nil
	for _, c := range r.pools {
		m := r.slow[c.Name]
		rows = append(rows, []string{c.Name, num(m.get("wall-ms"), 2), num(m.get("x-ideal"), 2), num(m.get("max-wait-ms"), 2), num(m.get("created"), 0), ratio(m.get("wall-ms"), r.slow[base].get("wall-ms"))})
	}
	table(w, []string{"pool", "wall ms", "wall ÷ ideal", "longest wait ms", "objects created", "wall × actorpool"}, rows)

	fmt.Fprintf(w, "## Fairness: %d goroutines, pool of %d, holding %v, %d takes each on average\n\n", workload.FairnessGoroutines, workload.FairnessSize, workload.FairnessHold, workload.FairnessTakes)
	rows = nil
	for _, c := range r.pools {
		m := r.fair[c.Name]
		rows = append(rows, []string{c.Name, num(m.get("min-takes"), 0), num(m.get("max-takes"), 0), num(m.get("p99-wait-us"), 0), num(m.get("max-wait-us"), 0), ratio(m.get("max-wait-us"), r.fair[base].get("max-wait-us"))})
	}
	table(w, []string{"pool", "fewest takes", "most takes", "p99 wait µs", "longest wait µs", "longest wait × actorpool"}, rows)

	printPoolGoals(w, r)
}

// bestThirdParty returns the best value of a metric among the third-party
// pools, by better, and which pool had it.
func (r *poolResults) bestThirdParty(get func(pool string) float64, better func(a, b float64) bool) (float64, string) {
	best, who := nan, ""
	for _, c := range r.pools {
		if c.Kind != pools.ThirdParty {
			continue
		}
		v := get(c.Name)
		if math.IsNaN(v) {
			continue
		}
		if math.IsNaN(best) || better(v, best) {
			best, who = v, c.Name
		}
	}
	return best, who
}

func higher(a, b float64) bool { return a > b }
func lower(a, b float64) bool  { return a < b }

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// printPoolGoals prints the goals table for each of our pools that ran.
func printPoolGoals(w io.Writer, r *poolResults) {
	for _, c := range r.pools {
		if c.Kind == pools.Ours {
			printPoolGoalsOf(w, r, c.Name)
		}
	}
}

func printPoolGoalsOf(w io.Writer, r *poolResults, base string) {
	fmt.Fprintf(w, "## Goals of the pool (issue 3): %s\n\n", base)
	var rows [][]string
	d, ok := r.direct[base]
	if !ok {
		// No direct variant: the adapter's figure, a few ns higher.
		d = r.uncontended[base]
	}
	ns, allocs := d.get("ns/op"), d.get("allocs/op")
	rows = append(rows,
		[]string{"uncontended take + give-back ≤ 25 ns", num(ns, 1) + " ns", mark(ns <= 25)},
		[]string{"uncontended 0 allocs/op", num(allocs, 0), mark(allocs == 0)},
	)
	pud := r.direct["puddle"].get("ns/op")
	if !ok {
		pud = r.uncontended["puddle"].get("ns/op")
	}
	rows = append(rows, []string{"uncontended ≥ 5× faster than puddle", ratio(pud, ns), mark(pud/ns >= 5)})

	var tputMet, latMet, total int
	var tputMiss, latMiss []string
	for _, cell := range r.cells {
		m := r.contended[cell]
		mine := m[base].get("ops/s")
		best, who := r.bestThirdParty(func(p string) float64 { return m[p].get("ops/s") }, higher)
		lat := m[base].get("p99.9-ns")
		bestLat, whoLat := r.bestThirdParty(func(p string) float64 { return m[p].get("p99.9-ns") }, lower)
		total++
		if mine >= best {
			tputMet++
		} else {
			tputMiss = append(tputMiss, fmt.Sprintf("%s: %s of %s", cell.Name(), ratio(mine, best), who))
		}
		if lat <= bestLat {
			latMet++
		} else {
			latMiss = append(latMiss, fmt.Sprintf("%s: %s of %s", cell.Name(), ratio(lat, bestLat), whoLat))
		}
	}
	rows = append(rows,
		[]string{"contended throughput ≥ best third-party pool, every cell", fmt.Sprintf("%d of %d cells", tputMet, total), mark(tputMet == total)},
		[]string{"contended p99.9 ≤ best third-party pool's, every cell", fmt.Sprintf("%d of %d cells", latMet, total), mark(latMet == total)},
	)
	for _, hold := range workload.Holds {
		cell := workload.Cell{Size: 8, Hold: hold, Goroutines: 64}
		m, ok := r.contended[cell]
		if !ok {
			continue
		}
		mine, vt := m[base].get("ops/s"), m["smartconnpool"].get("ops/s")
		rows = append(rows,
			[]string{"64 goroutines on 8 objects, hold " + workload.HoldName(hold) + ": throughput ≥ smartconnpool", ratio(mine, vt) + " of smartconnpool", mark(mine >= vt)},
			[]string{"64 goroutines on 8 objects, hold " + workload.HoldName(hold) + ": 0 allocs/op", num(m[base].get("allocs/op"), 0), mark(m[base].get("allocs/op") == 0)},
			[]string{"64 goroutines on 8 objects, hold " + workload.HoldName(hold) + ": longest sampled wait ≲ 1 ms", num(m[base].get("max-ns")/1e3, 0) + " µs", mark(m[base].get("max-ns") <= 1.2e6)},
		)
	}
	x := r.slow[base].get("x-ideal")
	rows = append(rows, []string{"slow create: wall ≤ 1.1× the ideal (creates in parallel up to the size)", num(x, 2) + "×", mark(x <= 1.1)})
	fw := r.fair[base].get("max-wait-us")
	bestFw, whoFw := r.bestThirdParty(func(p string) float64 { return r.fair[p].get("max-wait-us") }, lower)
	rows = append(rows, []string{"fairness: longest wait ≤ best third-party pool's", fmt.Sprintf("%s µs; %s: %s µs", num(fw, 0), whoFw, num(bestFw, 0)), mark(fw <= bestFw)})
	table(w, []string{"goal", "measured", ""}, rows)
	if len(tputMiss) > 0 {
		fmt.Fprintf(w, "Cells where %s's throughput is below the best third-party pool's (as a ratio of it):\n\n", base)
		for _, s := range tputMiss {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	}
	if len(latMiss) > 0 {
		fmt.Fprintf(w, "Cells where %s's p99.9 is above the best third-party pool's (as a ratio of it):\n\n", base)
		for _, s := range latMiss {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	}
}
