//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sockpeek

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// Peek looks at c's receive queue. It reports whether bytes wait to be
// read, and the first of them; an error wrapping ErrPeerClosed and io.EOF
// when the peer has closed the connection and nothing is left to read; or
// another error when the socket is broken. A connection with no socket
// under it (a net.Pipe; a *tls.Conn, whose NetConn can be passed instead)
// reports nothing waiting.
//
// Peek neither waits for the connection to become readable nor for a
// Read in progress on another goroutine: it looks at the file descriptor
// through Control, not Read, which would queue behind that Read.
func Peek(c net.Conn) (first byte, waiting bool, err error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var (
		n    int
		perr error
		buf  [1]byte
	)
	err = raw.Control(func(fd uintptr) {
		n, _, perr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("checking the connection: %w", err)
	case errors.Is(perr, syscall.EAGAIN), errors.Is(perr, syscall.EWOULDBLOCK):
		return 0, false, nil // nothing to read: the connection is open and quiet
	case perr != nil:
		return 0, false, fmt.Errorf("connection broken: %w", perr)
	case n == 0:
		return 0, false, fmt.Errorf("%w: %w", ErrPeerClosed, io.EOF)
	}
	return buf[0], true, nil
}
