//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// TestStartEmbeddedJetStream proves that the embedded server starts on
// its store, notes who runs it and where in the store's lock, so that a
// second start on the store fails saying so, and gives the store back
// when shut down.
func TestStartEmbeddedJetStream(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store") // made if missing
	e, err := startEmbeddedJetStream(dir, "console")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.url(), "nats://127.0.0.1:") || e.describe() != "an embedded NATS server, stored in "+dir {
		t.Errorf("url %q, describe %q", e.url(), e.describe())
	}
	nc, err := nats.Connect(e.url())
	if err != nil {
		t.Fatal(err)
	}
	if js, err := nc.JetStream(); err != nil {
		t.Error(err)
	} else if _, err := js.AccountInfo(); err != nil {
		t.Errorf("the server runs no JetStream: %v", err)
	}
	nc.Close()

	_, err = startEmbeddedJetStream(dir, "demo")
	var busy *storeBusyError
	if !errors.As(err, &busy) || busy.holder != (storeHolder{Command: "console", PID: os.Getpid(), URL: e.url()}) || busy.dir != dir {
		t.Errorf("a second start on the store: %v (%+v); want it taken by this console at %s", err, busy, e.url())
	}
	e.shutdown()
	again, err := startEmbeddedJetStream(dir, "demo")
	if err != nil {
		t.Fatalf("a start after the first was shut down: %v", err)
	}
	again.shutdown()
}
