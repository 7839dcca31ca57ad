package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// serverWait bounds how long a stop or start may take to show.
const serverWait = 30 * time.Second

// control skips t, or fails it under CI, unless this process can stop and
// start the server at addr: the server is on this machine, we are root, and
// tool is installed.
func control(t testing.TB, addr, tool string) {
	t.Helper()
	why := ""
	host, _, err := net.SplitHostPort(addr)
	switch {
	case err != nil:
		why = fmt.Sprintf("address %q: %v", addr, err)
	case !net.ParseIP(host).IsLoopback() && host != "localhost":
		why = fmt.Sprintf("the server at %s is not on this machine", addr)
	case os.Geteuid() != 0:
		why = "stopping the server needs root"
	default:
		if _, err := exec.LookPath(tool); err != nil {
			why = fmt.Sprintf("%s is not installed", tool)
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("fault test cannot control the server under CI: %s", why)
	}
	t.Skipf("fault test needs a server it can restart: %s; run bash .ci/run as root", why)
}

// StopRedis shuts down the Redis server at addr (SHUTDOWN NOSAVE) and
// waits until it refuses connections. It arranges for the server to be
// started again when t ends, however t ends.
func StopRedis(t testing.TB, addr string) {
	t.Helper()
	control(t, addr, "redis-server")
	exclusive(t, "redis")
	t.Cleanup(func() {
		if !Reachable(addr) {
			if err := startRedis(addr); err != nil {
				t.Errorf("restarting Redis after the test: %v", err)
			}
		}
	})
	c, err := net.DialTimeout("tcp", addr, reachTimeout)
	if err != nil {
		t.Fatalf("stop Redis: %v", err)
	}
	// The server closes the connection instead of replying.
	c.SetDeadline(time.Now().Add(serverWait))
	_, err = c.Write([]byte("*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n"))
	if err == nil {
		var b [64]byte
		c.Read(b[:])
	}
	c.Close()
	if err := waitFor(func() bool { return !Reachable(addr) }); err != nil {
		t.Fatalf("stop Redis at %s: still reachable: %v", addr, err)
	}
}

// StartRedis starts the Redis server at addr, as .ci/run does, and waits
// until it accepts connections.
func StartRedis(t testing.TB, addr string) {
	t.Helper()
	control(t, addr, "redis-server")
	if err := startRedis(addr); err != nil {
		t.Fatal(err)
	}
}

func startRedis(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	for _, dir := range []string{"/var/lib/redis", "/var/log/redis"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// With --daemonize the server detaches and this command returns at
	// once; its output goes to the log file.
	cmd := exec.Command("redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", port,
		"--save", "", "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("start Redis: %v: %s", err, out)
	}
	if err := waitFor(func() bool { return Reachable(addr) }); err != nil {
		return fmt.Errorf("start Redis on %s: %w; see /var/log/redis/ci.log", addr, err)
	}
	return nil
}

// StopPostgres stops the local PostgreSQL cluster at addr (fast shutdown:
// sessions are ended, transactions rolled back) and waits until it refuses
// connections. It arranges for the cluster to be started again when t
// ends, however t ends.
func StopPostgres(t testing.TB, addr string) {
	t.Helper()
	control(t, addr, "pg_ctlcluster")
	exclusive(t, "postgres")
	t.Cleanup(func() {
		if !Reachable(addr) {
			if err := pgctl("start"); err != nil {
				t.Errorf("restarting PostgreSQL after the test: %v", err)
			} else if err := waitFor(func() bool { return Reachable(addr) }); err != nil {
				t.Errorf("restarting PostgreSQL after the test: %v", err)
			}
		}
	})
	if err := pgctl("stop", "-m", "fast"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(func() bool { return !Reachable(addr) }); err != nil {
		t.Fatalf("stop PostgreSQL at %s: still reachable: %v", addr, err)
	}
}

// StartPostgres starts the local PostgreSQL cluster at addr and waits until
// it accepts connections.
func StartPostgres(t testing.TB, addr string) {
	t.Helper()
	control(t, addr, "pg_ctlcluster")
	if err := pgctl("start"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(func() bool { return Reachable(addr) }); err != nil {
		t.Fatalf("start PostgreSQL on %s: %v", addr, err)
	}
}

// pgctl runs pg_ctlcluster on the machine's first cluster, named "main"
// as Debian names it.
func pgctl(action string, args ...string) error {
	versions, err := filepath.Glob("/etc/postgresql/*/main")
	if err != nil || len(versions) == 0 {
		return fmt.Errorf("pg_ctlcluster %s: no cluster under /etc/postgresql", action)
	}
	version := filepath.Base(filepath.Dir(versions[0]))
	cmd := exec.Command("pg_ctlcluster", append([]string{"--skip-systemctl-redirect", version, "main", action}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctlcluster %s main %s: %v: %s", version, action, err, out)
	}
	return nil
}

// waitFor polls cond until it holds or serverWait passes.
func waitFor(cond func() bool) error {
	deadline := time.Now().Add(serverWait)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v", serverWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Eventually polls cond every few milliseconds until it holds, and fails t
// if it does not within limit. It waits for real events, such as a server
// coming back; it asserts nothing about how long they take.
func Eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
