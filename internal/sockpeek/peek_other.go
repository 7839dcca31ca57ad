//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sockpeek

import "net"

// Peek cannot look at a socket's receive queue on this system: it reports
// nothing waiting.
func Peek(c net.Conn) (first byte, waiting bool, err error) { return 0, false, nil }
