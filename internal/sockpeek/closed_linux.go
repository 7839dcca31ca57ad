//go:build linux

package sockpeek

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// Closed reports whether the peer has shut down its side of c, even while
// data it sent before waits to be read: Peek sees the first byte waiting,
// not the end of the stream behind it, and a TLS 1.3 goodbye
// (close_notify) waits there as a record like any other. One poll(2)
// with no wait. It reports false for a connection with no socket under it.
func Closed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var revents int16
	err = raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		if n, perr := unix.Poll(fds, 0); perr == nil && n == 1 {
			revents = fds[0].Revents
		}
	})
	return err == nil && revents&(unix.POLLRDHUP|unix.POLLHUP) != 0
}
