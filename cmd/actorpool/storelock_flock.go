//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockStore takes the embedded JetStream server's store in dir for this
// process, and returns what gives it back. The NATS server does not lock
// its store, and two servers writing one store corrupt it: a second demo
// started on the same directory must stop instead. The lock is the
// kernel's, held by the open file, so that a process killed leaves none
// behind.
func lockStore(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, storeLockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock the embedded JetStream server's store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another actorpool demo runs the embedded JetStream server on %s; wait for it to end, or give this one a directory of its own with --jetstream-dir", dir)
		}
		return nil, fmt.Errorf("cannot lock the embedded JetStream server's store in %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
