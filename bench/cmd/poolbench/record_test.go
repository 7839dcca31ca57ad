package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRaw(t *testing.T) {
	raw := `goos: linux
cpu: AMD EPYC
BenchmarkUncontended/pool=actorpool-2	10690102	26.37 ns/op	0 B/op	0 allocs/op
BenchmarkUncontended/pool=actorpool-2	10690102	24.00 ns/op	0 B/op	0 allocs/op
BenchmarkContended/size=8/hold=0/goroutines=4/pool=mailbox-partitioned-2	100	434.0 ns/op	2303916 ops/s	225280 p99.9-ns
PASS
`
	rp, err := readRaw(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if rp.most != 2 {
		t.Errorf("most = %d, want 2 runs of one benchmark", rp.most)
	}
	tests := []struct {
		name, unit string
		want       float64
	}{
		{"Uncontended/pool=actorpool", "ns/op", 26.37},
		{"Uncontended/pool=actorpool", "ns/op", 24},
		{"Contended/size=8/hold=0/goroutines=4/pool=mailbox-partitioned", "p99.9-ns", 225280},
	}
	for _, tt := range tests {
		vals, ok := rp.run(tt.name, nil)
		if !ok {
			t.Fatalf("no run left for %s", tt.name)
		}
		if got := vals[tt.unit]; got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.name, tt.unit, got, tt.want)
		}
	}
	if _, ok := rp.run("Uncontended/pool=actorpool", nil); ok {
		t.Error("a third run of Uncontended/pool=actorpool came back; the file has two")
	}
}

func TestReadRawRejectsBrokenLines(t *testing.T) {
	for _, line := range []string{
		"BenchmarkX-2\t100\t12 ns/op\t5",
		"BenchmarkX-2\t100\ttwelve ns/op",
	} {
		if _, err := readRaw(strings.NewReader(line + "\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("readRaw(%q) error = %v, want one naming line 1", line, err)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   sample
		want float64
	}{
		{sample{3, 1, 2}, 2},
		{sample{4, 1, 3, 2}, 2.5},
		{sample{7}, 7},
	}
	for _, tt := range tests {
		if got := tt.in.median(); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !math.IsNaN(sample(nil).median()) {
		t.Error("median of nothing is not NaN")
	}
}

// TestReplayMakesTablesAndCharts runs a tiny pools suite, writes it raw,
// reads it back with -from, and checks that the replay makes the tables
// and the SVG charts. (The replay's figures are those the raw file rounds
// to, so its tables need not match the run's to the last digit.)
func TestReplayMakesTablesAndCharts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.txt")
	captureStdout(t, func() error {
		return run("pools", 1, 1, "actorpool,chan", "", true, dir, raw, "")
	})
	charts := []string{"throughput.svg", "latency.svg"}
	for _, name := range charts {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatalf("the run wrote no %s: %v", name, err)
		}
	}
	tables := captureStdout(t, func() error {
		return run("pools", 1, 1, "actorpool,chan", "", true, dir, "", raw)
	})
	for _, want := range []string{"## Uncontended", "| actorpool | ", "| chan | ", "| 8 | 0 | 64 | actorpool | ", "## Goals of the pool"} {
		if !strings.Contains(tables, want) {
			t.Errorf("tables made from the raw file lack %q:\n%s", want, tables)
		}
	}
	for _, name := range charts {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("actorpool")) {
			t.Errorf("%s is not an SVG chart naming actorpool", name)
		}
	}
}

// A raw file with no pool runs in it, such as one of the tasks suite,
// replays as the pools suite into tables without figures and no charts,
// rather than failing in the plotting library.
func TestReplayWithoutPoolRuns(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.txt")
	line := "BenchmarkTasks/queue=bounded/work=noop/producers=1/workers=1/exec=actor-2\t100\t61.0 ns/op\n"
	if err := os.WriteFile(raw, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	captureStdout(t, func() error {
		return run("all", 1, 1, "", "", true, dir, "", raw)
	})
	for _, name := range []string{"throughput.svg", "latency.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s drawn with no contended run to draw", name)
		}
	}
}

func captureStdout(t *testing.T, f func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(r)
		done <- b.String()
	}()
	ferr := f()
	os.Stdout = old
	w.Close()
	out := <-done
	if ferr != nil {
		t.Fatal(ferr)
	}
	return out
}
