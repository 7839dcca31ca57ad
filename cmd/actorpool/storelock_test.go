//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestLockStore proves that a store locked once cannot be locked again
// until it is given back, and that the second lock's error says who holds
// it, as the holder noted; flock's locks belong to the open file, so two
// locks in one process conflict as two processes' do.
func TestLockStore(t *testing.T) {
	for _, tt := range []struct {
		name   string
		holder *storeHolder
		want   string
	}{
		{"no note", nil, "another actorpool process runs the embedded JetStream server on DIR; wait for it to end, or give this one"},
		{"a demo", &storeHolder{Command: "demo", PID: 42, URL: "nats://127.0.0.1:4567"},
			"another actorpool demo (pid 42) runs the embedded JetStream server on DIR at nats://127.0.0.1:4567; wait for it to end, reach its server with --jetstream=nats://127.0.0.1:4567, or give this one a directory of its own with --jetstream-dir"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			lock, err := lockStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.holder != nil {
				if err := lock.note(*tt.holder); err != nil {
					t.Fatal(err)
				}
			}
			_, err = lockStore(dir)
			var busy *storeBusyError
			if want := strings.ReplaceAll(tt.want, "DIR", dir); !errors.As(err, &busy) || !strings.Contains(err.Error(), want) {
				t.Errorf("a second lock: %v\nwant a *storeBusyError with %q", err, want)
			}
			lock.unlock()
			again, err := lockStore(dir)
			if err != nil {
				t.Fatalf("a lock after the first was given back: %v", err)
			}
			again.unlock()
		})
	}
}

// TestDemoJetStreamStoreInUse proves that a demo started on the store of
// an embedded server that another demo runs stops at once with exit code
// 1, leaving the first to run on: two servers on one store corrupt it.
func TestDemoJetStreamStoreInUse(t *testing.T) {
	dir := t.TempDir()
	cmd, lines, wait := start(t, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "10m", "--clients", "2", "--size", "2", "--workers", "1")
	waitLine(t, lines, "is durable", nil)
	o := runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "another actorpool demo (pid ") || !strings.Contains(o.stderr, "runs the embedded JetStream server on "+dir+" at nats://127.0.0.1:") {
		t.Errorf("want exit 1 saying another demo has the store, and its server's URL\n%v", o)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != exitInterrupted || !strings.Contains(o.stdout, "left queued in stream actorpool_demo_audit") && !strings.Contains(o.stdout, "its queue in stream actorpool_demo_audit is empty") {
		t.Errorf("the first demo: want exit %d and its queue's state\n%v", exitInterrupted, o)
	}
}
