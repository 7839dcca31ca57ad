package jsactor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/nats-io/nats.go"
)

// Some tests run actors in child processes — this test binary, run again
// with childEnv naming the child's role — so that they can kill them with
// SIGKILL or freeze them with SIGSTOP. A child connects to the server at
// childURLEnv, says what it does on its standard output, logs on its
// standard error, and closes its actor and exits 0 when its standard input
// ends: when the test asks it to stop, or when the test process dies, so
// that no child outlives the test.
const (
	childEnv    = "JSACTOR_TEST_CHILD" // the role, a key of childRoles
	childURLEnv = "JSACTOR_TEST_URL"   // the NATS server's client URL
	childDirEnv = "JSACTOR_TEST_DIR"   // a directory the child may write its records in
)

// childRoles are the mains of the children, by role.
var childRoles = map[string]func(env childEnvironment) error{
	"chaos":  chaosChild,
	"frozen": frozenChild,
}

// TestMain runs a child's role instead of the tests when childEnv is set.
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(m.Run())
}

// childEnvironment is what a child's main is given.
type childEnvironment struct {
	nc   *nats.Conn
	dir  string
	log  *slog.Logger
	stop <-chan struct{} // closed when the parent closes the child's standard input
}

// runChild runs role's main and returns the process's exit code.
func runChild(role string) int {
	main, ok := childRoles[role]
	if !ok {
		fmt.Fprintf(os.Stderr, "jsactor test child: unknown role %q\n", role)
		return 2
	}
	nc, err := nats.Connect(os.Getenv(childURLEnv), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		fmt.Fprintf(os.Stderr, "jsactor test child %s: %v\n", role, err)
		return 2
	}
	defer nc.Close()
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	env := childEnvironment{
		nc:   nc,
		dir:  os.Getenv(childDirEnv),
		log:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		stop: stop,
	}
	if err := main(env); err != nil {
		fmt.Fprintf(os.Stderr, "jsactor test child %s: %v\n", role, err)
		return 2
	}
	return 0
}

// closeChildActor closes a child's actor once its parent asks, within
// 10 seconds.
func closeChildActor[T any](env childEnvironment, a *Actor[T]) error {
	<-env.stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.Close(ctx)
}

// A child is a child process, as the test sees it.
type child struct {
	t     testing.TB
	name  string
	cmd   *exec.Cmd
	stdin *os.File // the write end of the child's standard input
	out   testenv.LockedBuffer
	done  chan struct{} // closed once the child has exited and its output is read
	err   error         // cmd.Wait's, once done is closed
}

// startChild starts a child in role, connected to the server at url and
// writing its records in dir. The test ends it with stop or kill; one
// still running when the test ends is killed.
func startChild(t testing.TB, name, role, url, dir string) *child {
	t.Helper()
	c := &child{t: t, name: name, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), childEnv+"="+role, childURLEnv+"="+url, childDirEnv+"="+dir)
	stdin, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdin, c.stdin = stdin, w
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	err = c.cmd.Start()
	stdin.Close() // the child's copy is the one that counts
	if err != nil {
		w.Close()
		t.Fatal(err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
		c.stdin.Close()
	})
	return c
}

// signal sends sig to the child.
func (c *child) signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("%s: signal %v: %v", c.name, sig, err)
	}
}

// exited reports whether the child has exited.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// kill kills the child with SIGKILL and waits for it to exit.
func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.done
	c.stdin.Close()
}

// stop asks the child to close its actor and exit, and waits up to d for
// it; it fails the test unless the child exits 0.
func (c *child) stop(d time.Duration) {
	c.t.Helper()
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(d):
		c.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, in its output
		<-c.done
		c.t.Errorf("%s did not exit within %v of being asked to stop:\n%s", c.name, d, c.tail())
		return
	}
	if c.err != nil {
		c.t.Errorf("%s: %v:\n%s", c.name, c.err, c.tail())
	}
}

// waitFor waits up to d for a line of the child's output that matches re,
// and returns its submatches.
func (c *child) waitFor(d time.Duration, re *regexp.Regexp) []string {
	c.t.Helper()
	end := time.Now().Add(d)
	for {
		exited := c.exited()
		if m := re.FindStringSubmatch(c.out.String()); m != nil {
			return m
		}
		if exited {
			c.t.Fatalf("%s exited (%v) without saying %q; its output:\n%s", c.name, c.err, re, c.tail())
		}
		if time.Now().After(end) {
			c.t.Fatalf("%s did not say %q within %v; its output:\n%s", c.name, re, d, c.tail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tail returns the end of the child's output.
func (c *child) tail() string {
	s := c.out.String()
	if len(s) > 20000 {
		s = "…" + s[len(s)-20000:]
	}
	return s
}
