package main

import (
	"os"
	"strings"
	"testing"

	"github.com/actorpool/actorpool/bench/queues"
	"github.com/actorpool/actorpool/bench/servers"
)

// TestMain lets the recovery cell of -suite queues re-run this test binary
// as the worker process it kills.
func TestMain(m *testing.M) {
	queues.MaybeChild()
	os.Exit(m.Run())
}

// TestQueuesSuite runs -suite queues once at the quick scale and checks
// that it prints every table, and that it refuses -raw and -from.
func TestQueuesSuite(t *testing.T) {
	if err := runQueues(1, true, "raw.txt", ""); err == nil || !strings.Contains(err.Error(), "-raw") {
		t.Errorf("-suite queues -raw: error %v, want one saying it writes no -raw file", err)
	}
	servers.Need(t, servers.Postgres)
	if testing.Short() {
		t.Skip("runs the queues for about ten seconds")
	}
	out := captureStdout(t, func() error { return runQueues(1, true, "", "") })
	for _, want := range []string{"### Throughput", "| burn-down |", "| sustained |", "### Send-to-start latency", "| pgactor |", "| river-defaults |", "### Recovery", "pgactor, lease 5s (default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
