//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package actor

import (
	"errors"
	"os"
	"syscall"
)

// fileLocking says that a second FileSink of a file is refused.
const fileLocking = true

// lockFile takes an exclusive lock on f, for as long as it is open, or
// fails with errLocked if another open file holds one: flock(2), which
// holds across processes and between two opens of the file in one.
func lockFile(f *os.File) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := raw.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if !errors.Is(lerr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return lerr
}
