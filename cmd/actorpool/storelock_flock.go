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
// process, and returns the lock, to give it back. The NATS server does
// not lock its store, and two servers writing one store corrupt it: a
// second demo or console started on the same directory must not start a
// server of its own. The lock is the kernel's, held by the open file, so
// that a process killed leaves none behind. A store taken already fails
// with a *storeBusyError that says by whom, as the holder noted it.
func lockStore(dir string) (*storeLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, storeLockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock the embedded JetStream server's store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &storeBusyError{dir: dir, holder: readHolder(f)}
		}
		return nil, fmt.Errorf("cannot lock the embedded JetStream server's store in %s: %w", dir, err)
	}
	return &storeLock{f: f}, nil
}
