package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/bench/servers"
)

// serverResults holds every metric of the comparison on real servers, by
// cell and pool.
type serverResults struct {
	pools []servers.Contender
	cells []servers.Cell
	runs  map[servers.Cell]map[string]metrics
}

// prepareServers finds the server of each pool in cs, prepares its data,
// and returns the address of each server it can use and the pools that
// pass servers.Check. A server that cannot be reached or prepared, and a
// pool that fails its check, are left out, and log says why.
func prepareServers(cs []servers.Contender, log io.Writer) (map[servers.Server]string, []servers.Contender) {
	addrs := map[servers.Server]string{}
	var ok []servers.Contender
	for _, s := range servers.Servers {
		of := servers.Of(cs, s)
		if len(of) == 0 {
			continue
		}
		addr := s.Addr()
		err := s.Reach(addr)
		if err == nil {
			err = servers.Prepare(s, addr)
		}
		if err != nil {
			fmt.Fprintf(log, "left out %v: %v\n", s, err)
			continue
		}
		addrs[s] = addr
		for _, c := range of {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := servers.Check(ctx, c, addr)
			cancel()
			if err != nil {
				fmt.Fprintf(log, "left out, failed the correctness check: %v\n", err)
				continue
			}
			ok = append(ok, c)
		}
	}
	return addrs, ok
}

// runServers runs the cells of each server in addrs count times, every
// pool back to back in each cell, and the cells in the same order each
// time. A replay passes every server, with no address.
func runServers(rec source, cs []servers.Contender, addrs map[servers.Server]string, count int, short bool) *serverResults {
	res := &serverResults{pools: cs, runs: map[servers.Cell]map[string]metrics{}}
	for _, s := range servers.Servers {
		if _, ok := addrs[s]; !ok {
			continue
		}
		for _, cell := range servers.Cells(s) {
			if short && cell.Clients > 64 {
				continue
			}
			res.cells = append(res.cells, cell)
			res.runs[cell] = map[string]metrics{}
		}
	}
	for range count {
		for _, cell := range res.cells {
			addr := addrs[cell.Op.Server]
			for _, c := range servers.Of(cs, cell.Op.Server) {
				r, ok := rec.run(cell.FullName(c.Name), func(b *testing.B) { servers.Run(b, c, cell, addr) })
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
	// A cell no pool has figures for — a server the raw file has no runs
	// of, a cell left out by -short when it was written — has no row.
	res.cells = slices.DeleteFunc(res.cells, func(cell servers.Cell) bool { return len(res.runs[cell]) == 0 })
	return res
}

// names returns the names of the pools of server s that ran.
func (r *serverResults) names(s servers.Server) []string {
	var names []string
	for _, c := range servers.Of(r.pools, s) {
		names = append(names, c.Name)
	}
	return names
}

// cellsOf returns the cells of server s.
func (r *serverResults) cellsOf(s servers.Server) []servers.Cell {
	var cells []servers.Cell
	for _, c := range r.cells {
		if c.Op.Server == s {
			cells = append(cells, c)
		}
	}
	return cells
}

// opColumn names the column of a server's operations.
func opColumn(s servers.Server) string {
	if s == servers.Postgres {
		return "query"
	}
	return "op"
}

func printServerTables(w io.Writer, r *serverResults) {
	for _, s := range servers.Servers {
		cells := r.cellsOf(s)
		if len(cells) == 0 {
			continue
		}
		names, base := r.names(s), servers.Baseline(s)
		for _, f := range []struct {
			title, unit string
			scale       float64
			prec        int
		}{
			{"throughput, thousands of operations per second", "ops/s", 1e3, 1},
			{"p50 latency of an operation, µs", "p50-ns", 1e3, 1},
			{"p99 latency of an operation, µs", "p99-ns", 1e3, 0},
		} {
			fmt.Fprintf(w, "## %v: %s (ratio to %s)\n\n", s, f.title, base)
			var rows [][]string
			for _, cell := range cells {
				row := []string{cell.Op.Name, fmt.Sprint(cell.Clients)}
				b := r.runs[cell][base].get(f.unit)
				for _, n := range names {
					v := r.runs[cell][n].get(f.unit)
					row = append(row, fmt.Sprintf("%s (%s)", num(v/f.scale, f.prec), ratio(v, b)))
				}
				rows = append(rows, row)
			}
			table(w, append([]string{opColumn(s), "clients"}, names...), rows)
		}
	}

	fmt.Fprintf(w, "## Servers, every figure\n\n")
	var rows [][]string
	for _, cell := range r.cells {
		s := cell.Op.Server
		b := r.runs[cell][servers.Baseline(s)].get("ops/s")
		for _, n := range r.names(s) {
			m := r.runs[cell][n]
			rows = append(rows, []string{
				s.String(), cell.Op.Name, fmt.Sprint(cell.Clients), n,
				num(m.get("ops/s")/1e3, 1), ratio(m.get("ops/s"), b),
				num(m.get("p50-ns")/1e3, 1), num(m.get("p99-ns")/1e3, 0), num(m.get("p99.9-ns")/1e3, 0), num(m.get("max-ns")/1e3, 0),
				num(m.get("allocs/op"), 0), num(m.get("B/op"), 0),
			})
		}
	}
	table(w, []string{"server", "op", "clients", "pool", "k ops/s", "× ours", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "allocs/op", "B/op"}, rows)

	printServerGoals(w, r)
}

// best returns the best value of a metric in a cell among the pools of
// its server other than ours, by better, and which pool had it.
func (r *serverResults) best(cell servers.Cell, unit string, better func(a, b float64) bool) (float64, string) {
	best, who := nan, ""
	for _, c := range servers.Of(r.pools, cell.Op.Server) {
		if c.Ours {
			continue
		}
		v := r.runs[cell][c.Name].get(unit)
		if math.IsNaN(v) {
			continue
		}
		if math.IsNaN(best) || better(v, best) {
			best, who = v, c.Name
		}
	}
	return best, who
}

// printServerGoals prints the goals of issue 5 — in every cell, a
// throughput at least the best of the other pools' and a p99 below the
// lowest of theirs — and the cells that miss them.
func printServerGoals(w io.Writer, r *serverResults) {
	fmt.Fprintf(w, "## Goals of the adapters (issue 5)\n\n")
	var rows [][]string
	var misses []string
	for _, s := range servers.Servers {
		cells := r.cellsOf(s)
		if len(cells) == 0 {
			continue
		}
		base := servers.Baseline(s)
		var others []string
		for _, n := range r.names(s) {
			if n != base {
				others = append(others, n)
			}
		}
		them := strings.Join(others, " and ")
		theirs := strings.Join(others, "'s and ") + "'s"
		var tput, lat, both, n int
		for _, cell := range cells {
			m := r.runs[cell]
			mine, myLat := m[base].get("ops/s"), m[base].get("p99-ns")
			bestT, whoT := r.best(cell, "ops/s", higher)
			bestL, whoL := r.best(cell, "p99-ns", lower)
			if math.IsNaN(mine) || math.IsNaN(bestT) || math.IsNaN(myLat) || math.IsNaN(bestL) {
				continue // a pool did not run in this cell: nothing to compare
			}
			n++
			okT, okL := mine >= bestT, myLat < bestL
			if okT {
				tput++
			} else {
				misses = append(misses, fmt.Sprintf("%v %s: throughput %s of %s's", s, cell.Name(), ratio(mine, bestT), whoT))
			}
			if okL {
				lat++
			} else {
				misses = append(misses, fmt.Sprintf("%v %s: p99 %s of %s's", s, cell.Name(), ratio(myLat, bestL), whoL))
			}
			if okT && okL {
				both++
			}
		}
		rows = append(rows,
			[]string{fmt.Sprintf("%v: %s throughput ≥ the best of %s, every cell", s, base, them), fmt.Sprintf("%d of %d cells", tput, n), mark(n > 0 && tput == n)},
			[]string{fmt.Sprintf("%v: %s p99 below the lower of %s, every cell", s, base, theirs), fmt.Sprintf("%d of %d cells", lat, n), mark(n > 0 && lat == n)},
			[]string{fmt.Sprintf("%v: both in the same cell, every cell", s), fmt.Sprintf("%d of %d cells", both, n), mark(n > 0 && both == n)},
		)
	}
	table(w, []string{"goal", "measured", ""}, rows)
	if len(misses) > 0 {
		fmt.Fprintf(w, "Cells that miss a goal (our figure as a ratio of the best other pool's):\n\n")
		for _, s := range misses {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	}
}
