package jsserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/leakcheck"
	"github.com/nats-io/nats.go/jetstream"
)

func TestClusterFailover(t *testing.T) {
	leakcheck.Check(t)
	dir := t.TempDir()
	c, err := StartCluster(3, Options{Name: "fo", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)

	if n := len(c.Servers()); n != 3 {
		t.Fatalf("Servers() has %d servers, want 3", n)
	}
	for i, s := range c.Servers() {
		name := fmt.Sprintf("fo-%d", i+1)
		if s.Name() != name {
			t.Errorf("server %d is named %q, want %q", i, s.Name(), name)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("server %s has no store in Dir: %v", name, err)
		}
	}
	if n := strings.Count(c.ClientURLs(), ","); n != 2 {
		t.Errorf("ClientURLs() = %q, want 3 URLs", c.ClientURLs())
	}

	js := connect(t, c.ClientURLs())
	st := createStream(t, js, "R3", 3)
	publish := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			// A publish that reaches a server while the stream's lead
			// moves may be dropped unanswered, even after a new leader
			// shows: it is sent again, under a message ID the stream
			// deduplicates by, as jsactor's sends are.
			msg := fmt.Sprintf("m%d", i)
			var err error
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err = js.Publish(ctx, "R3.x", []byte(msg), jetstream.WithMsgID(msg))
				cancel()
				if err == nil {
					break
				}
			}
			if err != nil {
				t.Fatalf("Publish %s: %v", msg, err)
			}
		}
	}
	publish(0, 10)

	var leader *Server
	eventually(t, 10*time.Second, "no server leads the stream", func() bool {
		leader = c.StreamLeader("R3")
		return leader != nil
	})
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.Cluster == nil || info.Cluster.Leader != leader.Name() || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("the stream's cluster is %+v; want StreamLeader's %s leading 2 replicas", info.Cluster, leader.Name())
	}
	if c.StreamLeader("NONE") != nil {
		t.Error("StreamLeader found a leader of a stream that does not exist")
	}
	t.Logf("%s leads the stream; shutting it down", leader.Name())
	leader.Shutdown()
	eventually(t, 30*time.Second, "no other server took over the stream's lead", func() bool {
		l := c.StreamLeader("R3")
		return l != nil && l != leader
	})
	publish(10, 20)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err = st.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.Cluster == nil || info.Cluster.Leader == leader.Name() {
		t.Errorf("after a failover the stream's cluster is %+v; want a leader other than %s", info.Cluster, leader.Name())
	}
	if info.State.Msgs != 20 {
		t.Errorf("the stream holds %d messages after a failover, want 20", info.State.Msgs)
	}
}

func TestStartClusterBadOptions(t *testing.T) {
	for _, tc := range []struct {
		n     int
		opts  Options
		field string
	}{
		{0, Options{}, "0 servers"},
		{3, Options{Port: 4333}, "Options.Port"},
		{3, Options{SyncInterval: -1}, "Options.SyncInterval"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c, err := StartCluster(tc.n, tc.opts)
			if err == nil {
				c.Shutdown()
				t.Fatalf("StartCluster(%d, %+v) succeeded, want an error naming %s", tc.n, tc.opts, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("StartCluster(%d, %+v) = %v, want an error naming %s", tc.n, tc.opts, err, tc.field)
			}
		})
	}
}

// TestClusterPortTaken starts a cluster whose first choice of route ports
// includes one another listener holds, as a process beside this one may
// take one between the choice and the start: StartCluster chooses again.
func TestClusterPortTaken(t *testing.T) {
	leakcheck.Check(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	choosePorts = func(host string, n int) ([]int, error) {
		calls++
		ports, err := freePorts(host, n)
		if calls == 1 && err == nil {
			ports[0] = taken.Addr().(*net.TCPAddr).Port
		}
		return ports, err
	}
	defer func() { choosePorts = freePorts }()
	c, err := StartCluster(3, Options{Name: "taken"})
	if err != nil {
		t.Fatalf("StartCluster with a route port taken: %v", err)
	}
	c.Shutdown()
	if calls != 2 {
		t.Errorf("route ports chosen %d times, want 2", calls)
	}
}
