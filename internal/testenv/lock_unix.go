//go:build unix

package testenv

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes f's lock, shared or exclusive, polling until it is free
// or limit passes.
func lockFile(f *os.File, exclusive bool, limit time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(limit)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still held by another test after %v", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
