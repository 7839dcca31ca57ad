//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package netpool

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// peek reports whether the peer has closed an idle connection or sent it
// something unasked, by looking at the socket's receive queue without
// taking anything from it and without waiting. A connection that cannot be
// looked at this way (TLS, a custom net.Conn) is reported healthy.
func peek(c *Conn) error {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var (
		n    int
		perr error
		buf  [1]byte
	)
	err = raw.Read(func(fd uintptr) bool {
		n, _, perr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Returning true stops Read from waiting for the socket to
		// become readable: the answer is wanted now.
		return true
	})
	switch {
	case err != nil:
		return fmt.Errorf("netpool: checking the connection: %w", err)
	case errors.Is(perr, syscall.EAGAIN), errors.Is(perr, syscall.EWOULDBLOCK):
		return nil // nothing to read: the connection is open and quiet
	case perr != nil:
		return fmt.Errorf("netpool: connection broken: %w", perr)
	case n == 0:
		return fmt.Errorf("netpool: the peer closed the connection: %w", io.EOF)
	default:
		return errUnexpectedData
	}
}
