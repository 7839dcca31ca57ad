// Package sockpeek looks at what waits on an idle connection's socket,
// without taking anything from it and without waiting, so that a pool can
// find connections whose peer has closed them, or sent them something
// unasked, with one system call and no round trip.
package sockpeek

import "errors"

// ErrPeerClosed is the error Peek wraps, with io.EOF, when the peer has
// closed the connection.
var ErrPeerClosed = errors.New("the peer closed the connection")
