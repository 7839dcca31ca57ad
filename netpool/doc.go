// Package netpool pools connections to any service reached through a
// net.Conn — a line protocol, a custom RPC, a TLS service — with an
// actorpool.Pool.
//
//	pool, err := netpool.New("127.0.0.1:7000")
//	...
//	defer pool.Close(ctx)
//	c, err := pool.Acquire(ctx)
//	...
//	defer c.Release()
//	fmt.Fprintln(c, "hello")
//
// NewWithConfig takes the service's address, an optional dialer (which
// may run a handshake) and an optional ping. Acquire lends a Conn, a
// net.Conn that remembers the first error of a Read or Write, so that a
// connection which failed or timed out mid-reply is destroyed when it is
// given back instead of being handed to the next caller; deadlines a
// caller set are cleared when it gives the connection back. With lends one
// for the length of a callback.
//
// # Finding connections the peer closed
//
// A server closes idle connections: it restarts, it times them out, it
// sheds load. Every Config.Pool.ValidationInterval the pool checks each
// idle connection on its own goroutines, never on the path that takes and
// gives back connections: it looks at the socket's receive queue, without
// reading from it and without waiting, and retires a connection whose peer
// has closed it or sent it data unasked; then it runs Config.Ping, if set.
// The look costs one system call per idle connection per interval; go-redis
// makes the same call on every checkout instead. It is made on TCP and Unix
// connections on Linux and the BSDs; other connections, TLS ones included,
// rely on the ping.
package netpool
