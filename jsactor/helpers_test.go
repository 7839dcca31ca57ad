package jsactor

import (
	"context"
	"testing"
	"time"

	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/nats-io/nats.go"
)

// startServer starts a private single-node server with JetStream for one
// test, and returns it.
func startServer(t testing.TB) *jsserver.Server {
	t.Helper()
	s, err := jsserver.Start(jsserver.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// connect connects to s for one test.
func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// rig is one test's server and connection.
func rig(t testing.TB) *nats.Conn {
	s := startServer(t)
	return connect(t, s.ClientURL())
}

// eventually polls cond every 10ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// closeT closes a at the end of the test.
func closeT[T any](t testing.TB, a *Actor[T]) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// testWriter writes a test's logs through t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
