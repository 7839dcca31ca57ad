//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"strings"
	"syscall"
	"testing"
)

// TestLockStore proves that a store locked once cannot be locked again
// until it is given back; flock's locks belong to the open file, so two
// locks in one process conflict as two processes' do.
func TestLockStore(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockStore(dir); err == nil || !strings.Contains(err.Error(), "another actorpool demo runs the embedded JetStream server on "+dir) {
		t.Errorf("a second lock: %v, want an error saying another demo has the store", err)
	}
	unlock()
	again, err := lockStore(dir)
	if err != nil {
		t.Fatalf("a lock after the first was given back: %v", err)
	}
	again()
}

// TestDemoJetStreamStoreInUse proves that a demo started on the store of
// an embedded server that another demo runs stops at once with exit code
// 1, leaving the first to run on: two servers on one store corrupt it.
func TestDemoJetStreamStoreInUse(t *testing.T) {
	dir := t.TempDir()
	cmd, lines, wait := start(t, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "10m", "--clients", "2", "--size", "2", "--workers", "1")
	waitLine(t, lines, "is durable", nil)
	o := runCmd(t, nil, "demo", "--jetstream", "--jetstream-dir", dir, "--duration", "1s")
	if o.code != 1 || !strings.Contains(o.stderr, "another actorpool demo runs the embedded JetStream server on "+dir) {
		t.Errorf("want exit 1 saying another demo has the store\n%v", o)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != exitInterrupted || !strings.Contains(o.stdout, "left queued in stream actorpool_demo_audit") && !strings.Contains(o.stdout, "its queue in stream actorpool_demo_audit is empty") {
		t.Errorf("the first demo: want exit %d and its queue's state\n%v", exitInterrupted, o)
	}
}
