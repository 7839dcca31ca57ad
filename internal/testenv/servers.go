package testenv

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Fault tests stop, kill and restart servers. They never do that to the
// shared servers named by ACTORPOOL_POSTGRES and ACTORPOOL_REDIS, which
// the tests of other packages, run in parallel by go test, are using: each
// fault test starts a private server of its own on a free port, in a
// temporary directory, and removes it when it ends.

// serverWait bounds how long a private server may take to start or stop.
const serverWait = 30 * time.Second

// privateControl skips t, or fails it under CI, unless this process can
// run a private server of the kind tool names.
func privateControl(t testing.TB, tool string) string {
	t.Helper()
	why := ""
	path, err := lookTool(tool)
	switch {
	case err != nil:
		why = err.Error()
	case os.Geteuid() != 0 && tool == "initdb":
		// PostgreSQL refuses to run as root, so the cluster runs as the
		// postgres user, which only root can switch to.
		why = "a private PostgreSQL runs as the postgres user, which needs root"
	}
	if why == "" {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("fault test cannot start a private server under CI: %s", why)
	}
	t.Skipf("fault test needs a private server: %s; run bash .ci/run as root", why)
	return ""
}

// lookTool finds tool on PATH or, for PostgreSQL's programs, in Debian's
// versioned directory, newest version first.
func lookTool(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		p := filepath.Join(d, tool)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed", tool)
}

// A PGServer is a private PostgreSQL cluster that a test created and may
// stop, start and restart at will. It runs as the postgres user, trusts
// every local connection, and is removed when the test ends.
type PGServer struct {
	t      testing.TB
	bin    string // directory of initdb, pg_ctl and postgres
	dir    string // holds data/, the socket and the log
	port   int
	mu     sync.Mutex
	frozen bool
}

var (
	pgTemplateOnce sync.Once
	pgTemplate     string
	pgTemplateErr  error
)

// PrivatePostgres creates and starts a private PostgreSQL cluster on a free
// port and arranges for it to be stopped and removed when t ends.
func PrivatePostgres(t testing.TB) *PGServer {
	t.Helper()
	initdb := privateControl(t, "initdb")
	s := &PGServer{t: t, bin: filepath.Dir(initdb)}
	dir, err := os.MkdirTemp("", "actorpool-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s.dir = dir
	t.Cleanup(func() {
		s.kill()
		os.RemoveAll(dir)
	})
	// One initdb per PostgreSQL version, copied for each cluster: initdb
	// takes seconds, a copy milliseconds.
	pgTemplateOnce.Do(func() { pgTemplate, pgTemplateErr = initTemplate(s.bin) })
	if pgTemplateErr != nil {
		t.Fatal(pgTemplateErr)
	}
	if out, err := exec.Command("cp", "-a", pgTemplate, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("copy the template cluster: %v: %s", err, out)
	}
	if err := chownPostgres(dir); err != nil {
		t.Fatal(err)
	}
	s.port = freePort(t)
	s.Start()
	return s
}

// initTemplate returns a freshly initialised data directory to copy,
// made by initdb the first time a test on this machine asks for one and
// kept, under the temporary directory, for the next test processes.
func initTemplate(bin string) (string, error) {
	final := filepath.Join(os.TempDir(), "actorpool-pgtemplate-"+filepath.Base(filepath.Dir(bin)))
	if _, err := os.Stat(filepath.Join(final, "PG_VERSION")); err == nil {
		return final, nil
	}
	dir, err := os.MkdirTemp("", "actorpool-pginit-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := chownPostgres(dir); err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	cmd := asPostgres(filepath.Join(bin, "initdb"), "--no-sync", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	// Another test process may have made it meanwhile: either copy will do.
	if err := os.Rename(data, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "PG_VERSION")); serr != nil {
			return "", fmt.Errorf("keep the template cluster: %w", err)
		}
	}
	return final, nil
}

// DSN returns a connection URL for the cluster's postgres database.
func (s *PGServer) DSN() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", s.Addr())
}

// Addr returns the cluster's host:port.
func (s *PGServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Ready reports whether the cluster accepts a session now: it answers a
// startup message by authenticating. A starting cluster accepts TCP
// connections some 100ms before that, and answers them with "the database
// system is starting up".
func (s *PGServer) Ready() bool {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	// A StartupMessage: length, protocol 3.0, then the parameters.
	params := "user\x00postgres\x00database\x00postgres\x00\x00"
	msg := binary.BigEndian.AppendUint32(nil, uint32(8+len(params)))
	msg = binary.BigEndian.AppendUint32(msg, 3<<16)
	msg = append(msg, params...)
	if _, err := c.Write(msg); err != nil {
		return false
	}
	kind := make([]byte, 1)
	if _, err := io.ReadFull(c, kind); err != nil || kind[0] != 'R' {
		return false
	}
	c.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
	return true
}

// Start starts the cluster and waits until it accepts connections.
func (s *PGServer) Start() {
	s.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", s.port, s.dir)
	cmd := asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", filepath.Join(s.dir, "data"), "-o", opts,
		"-l", filepath.Join(s.dir, "log"), "-w", "-t", strconv.Itoa(int(serverWait/time.Second)), "start")
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("start private PostgreSQL on %s: %v: %s\n%s", s.Addr(), err, out, s.log())
	}
	if err := waitFor(func() bool { return Reachable(s.Addr()) }); err != nil {
		s.t.Fatalf("start private PostgreSQL on %s: %v\n%s", s.Addr(), err, s.log())
	}
}

// Stop stops the cluster with a fast shutdown (sessions are ended,
// transactions rolled back) and waits until it refuses connections.
func (s *PGServer) Stop() { s.stop("fast") }

// Crash stops the cluster with an immediate shutdown, as a power cut or a
// kill -9 of the postmaster would: no checkpoint, recovery from the WAL at
// the next start.
func (s *PGServer) Crash() { s.stop("immediate") }

// Restart stops the cluster (fast) and starts it again.
func (s *PGServer) Restart() {
	s.t.Helper()
	s.Stop()
	s.Start()
}

func (s *PGServer) stop(mode string) {
	s.t.Helper()
	s.Thaw()
	cmd := asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", filepath.Join(s.dir, "data"), "-m", mode, "-w", "stop")
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("stop private PostgreSQL on %s: %v: %s", s.Addr(), err, out)
	}
	if err := waitFor(func() bool { return !Reachable(s.Addr()) }); err != nil {
		s.t.Fatalf("stop private PostgreSQL on %s: still reachable: %v", s.Addr(), err)
	}
}

// Freeze stops every process of the cluster with SIGSTOP: connections stay
// open and nothing answers, as when a server hangs or a network drops
// packets. Thaw, Stop and the test's end undo it.
func (s *PGServer) Freeze() {
	s.t.Helper()
	s.signalAll(syscall.SIGSTOP)
	s.mu.Lock()
	s.frozen = true
	s.mu.Unlock()
}

// Thaw resumes a frozen cluster.
func (s *PGServer) Thaw() {
	s.mu.Lock()
	frozen := s.frozen
	s.frozen = false
	s.mu.Unlock()
	if frozen {
		s.signalAll(syscall.SIGCONT)
	}
}

// signalAll signals the postmaster and its children.
func (s *PGServer) signalAll(sig syscall.Signal) {
	pid, ok := s.postmaster()
	if !ok {
		return
	}
	out, _ := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Output()
	pids := []int{pid}
	for _, f := range bytes.Fields(out) {
		if c, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, c)
		}
	}
	for _, p := range pids {
		syscall.Kill(p, sig)
	}
}

// postmaster reads the postmaster's pid from its pid file.
func (s *PGServer) postmaster() (int, bool) {
	b, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	return pid, err == nil
}

// kill stops the cluster at the end of the test, however the test ended.
func (s *PGServer) kill() {
	s.Thaw()
	if _, ok := s.postmaster(); !ok {
		return
	}
	asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop").Run()
}

func (s *PGServer) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	return string(b)
}

// asPostgres returns a command that runs as the postgres user.
func asPostgres(name string, args ...string) *exec.Cmd {
	if os.Geteuid() != 0 {
		return exec.Command(name, args...)
	}
	return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
}

// chownPostgres gives dir, and what it holds, to the postgres user.
func chownPostgres(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("private PostgreSQL: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// A RedisServer is a private redis-server that a test started and may stop
// and start again. It keeps nothing on disk and is stopped when the test
// ends.
type RedisServer struct {
	t    testing.TB
	bin  string
	port int
	args []string // more of redis-server's options
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// PrivateRedis starts a private redis-server on a free port, with args
// added to its options (such as "--tls-port", "6390"), and arranges for
// it to be stopped when t ends.
func PrivateRedis(t testing.TB, args ...string) *RedisServer {
	t.Helper()
	s := &RedisServer{t: t, bin: privateControl(t, "redis-server"), port: freePort(t), args: args}
	t.Cleanup(func() { s.kill() })
	s.Start()
	return s
}

// Addr returns the server's host:port.
func (s *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Ready reports whether the server answers a PING now.
func (s *RedisServer) Ready() bool {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// Start starts the server and waits until it accepts connections.
func (s *RedisServer) Start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"}, s.args...)...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start private Redis: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := waitFor(func() bool { return Reachable(s.Addr()) }); err != nil {
		s.t.Fatalf("start private Redis on %s: %v", s.Addr(), err)
	}
}

// Stop kills the server and waits until it has exited.
func (s *RedisServer) Stop() {
	s.t.Helper()
	if !s.kill() {
		s.t.Fatalf("stop private Redis on %s: it is not running", s.Addr())
	}
	if err := waitFor(func() bool { return !Reachable(s.Addr()) }); err != nil {
		s.t.Fatalf("stop private Redis on %s: still reachable: %v", s.Addr(), err)
	}
}

// kill ends the server process, if it runs, and reports whether it did.
func (s *RedisServer) kill() bool {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return false
	}
	cmd.Process.Kill()
	<-done
	return true
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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
