package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A recorder runs benchmarks, writes each run in Go benchmark format to the
// raw file, if any, and reports progress.
type recorder struct {
	log io.Writer
	raw io.Writer
	n   int
}

// header writes the lines benchstat expects before the runs.
func (r *recorder) header() {
	if r.raw == nil {
		return
	}
	fmt.Fprintf(r.raw, "goos: %s\ngoarch: %s\npkg: github.com/actorpool/actorpool/bench\n", runtime.GOOS, runtime.GOARCH)
	if cpu := cpuModel(); cpu != "" {
		fmt.Fprintf(r.raw, "cpu: %s\n", cpu)
	}
}

// A source gives the figures of one run of a benchmark: by running it, or
// by reading them from an earlier run's raw file.
type source interface {
	// run returns the figures of one run of the benchmark called name (as
	// go test names it, without the Benchmark prefix), by unit, or false
	// when there are none.
	run(name string, bench func(b *testing.B)) (map[string]float64, bool)
}

// run runs bench once and returns its figures, or false when it failed or
// skipped.
func (r *recorder) run(name string, bench func(b *testing.B)) (map[string]float64, bool) {
	res := testing.Benchmark(bench)
	r.n++
	if res.N == 0 {
		fmt.Fprintf(r.log, "%s: failed or skipped\n", name)
		return nil, false
	}
	line := fmt.Sprintf("Benchmark%s-%d\t%s\t%s", name, runtime.GOMAXPROCS(0), res.String(), res.MemString())
	if r.raw != nil {
		fmt.Fprintln(r.raw, line)
	}
	if r.n%25 == 0 {
		fmt.Fprintf(r.log, "%d runs done; last: %s\n", r.n, line)
	}
	vals := map[string]float64{
		"ns/op":     float64(res.T.Nanoseconds()) / float64(res.N),
		"allocs/op": float64(res.AllocsPerOp()),
		"B/op":      float64(res.AllocedBytesPerOp()),
	}
	for k, v := range res.Extra {
		vals[k] = v
	}
	return vals, true
}

// A replay gives the runs read from a raw file, in the order they were
// written.
type replay struct {
	runs map[string][]map[string]float64
	most int // the most runs of one benchmark
}

func (r *replay) run(name string, _ func(b *testing.B)) (map[string]float64, bool) {
	q := r.runs[name]
	if len(q) == 0 {
		return nil, false
	}
	r.runs[name] = q[1:]
	return q[0], true
}

// readRaw reads a file in Go benchmark format, as -raw writes it.
func readRaw(rd io.Reader) (*replay, error) {
	r := &replay{runs: map[string][]map[string]float64{}}
	s := bufio.NewScanner(rd)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; s.Scan(); line++ {
		f := strings.Fields(s.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if len(f) < 4 || len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: want a name, a count and value-unit pairs; got %q", line, s.Text())
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		vals := map[string]float64{}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q: %w", line, f[i], err)
			}
			vals[f[i+1]] = v
		}
		r.runs[name] = append(r.runs[name], vals)
		r.most = max(r.most, len(r.runs[name]))
	}
	return r, s.Err()
}

// cpuModel returns the first model name in /proc/cpuinfo, or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// A sample is one metric's values over the runs of one benchmark.
type sample []float64

// median returns the median, or NaN for no values.
func (s sample) median() float64 {
	if len(s) == 0 {
		return nan
	}
	v := slices.Clone(s)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// metrics collects, for one benchmark, each metric over its runs.
type metrics map[string]sample

func (m metrics) add(vals map[string]float64) {
	for k, v := range vals {
		m[k] = append(m[k], v)
	}
}

// get returns the median of a metric, or NaN when it was never measured.
func (m metrics) get(unit string) float64 {
	if m == nil {
		return nan
	}
	return m[unit].median()
}
