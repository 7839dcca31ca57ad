// Package pgpool pools PostgreSQL connections (pgx v5's *pgx.Conn) with an
// actorpool.Pool, and offers what pgxpool users expect of a pool: Exec,
// Query, QueryRow, SendBatch, CopyFrom, Begin and BeginTx on the pool, each
// on a connection it takes and gives back, and Acquire, AcquireFunc and
// With for several statements on one connection.
//
//	pool, err := pgpool.New("postgres://app@127.0.0.1/app?pool_max_conns=16&connect_timeout=5")
//	...
//	defer pool.Close(ctx)
//	var n int
//	err = pool.QueryRow(ctx, "SELECT count(*) FROM users WHERE active").Scan(&n)
//
// ParseConfig reads pgxpool's pool_* parameters from the connection string;
// connect_timeout bounds each connect, as Config.Pool.CreateTimeout.
//
// # What the pool checks
//
// A connection given back closed, busy (rows not closed, a batch not
// closed) or inside a transaction — open, or failed and awaiting a
// ROLLBACK — is destroyed, not handed to the next caller and not rolled
// back: closing it makes the server roll the transaction back and drop
// everything it held, with no round trip on the path that gives the
// connection back. These checks are in memory.
//
// A session the server ended — a restart, pg_terminate_backend, an idle
// timeout — leaves an error message and the end of the stream on its
// connection's socket. Before it hands out a connection that sat idle
// across a tick of its one-second clock, as every connection idle for a
// second or more did, the pool looks at that socket, without a round trip
// and without waiting (one system call), and replaces the connection if
// the server closed it or sent it an error; a notification or a notice
// waiting there is left for pgx to read. Over TLS, where what waits cannot
// be read without taking it, anything waiting retires the connection. A
// connection is looked at at most once a tick, so a busy pool makes almost
// no system calls for it; but a session ended less than a second before
// its connection is taken again may not be seen, and fails the statement
// of the caller who takes it (the connection is then replaced). pgxpool
// pings, a round trip, each connection idle for more than a second
// instead.
//
// Every Config.Pool.ValidationInterval (pool_health_check_period, a minute
// by default) the pool also pings each idle connection, which finds what
// the socket does not show, such as a server that stopped answering.
//
// # Giving connections back
//
// The pool's one-call methods give their connection back when done with
// it: Query's when the rows are closed, read to the end, or a Scan or
// Values fails (pgx closes the rows then), so that code that returns on a
// Scan error without closing the rows leaks nothing; QueryRow's when the
// row is scanned, even if a destination's scanner panics (the connection,
// its result unread, is then closed, and the panic goes on); Begin's when
// the transaction is committed or rolled back. pgxpool does the same.
//
// # Credentials
//
// Config.BeforeConnect runs before each connect with that connect's own
// copy of ConnConfig: set a rotated password or a short-lived token there,
// as with pgxpool's BeforeConnect. The pool keeps copies of the Config and
// ConnConfig it was made with, and Pool.Config returns a copy, so that
// nothing changes them under a connect; Pool.Reload makes every session
// log in again.
//
// # Contexts
//
// A statement ends when its context does: pgx cuts the connection off
// under it, by default, and the pool replaces the connection. The server
// learns of this only when the statement tries to send its result, so a
// long statement goes on running there; set statement_timeout in the
// connection string to bound it, or give ConnConfig a
// pgconn.CancelRequestContextWatcherHandler, which asks the server to
// cancel the statement and keeps the connection, but makes the caller wait
// for the cancel.
//
// # Nesting
//
// The pool's methods called with the context a With callback receives run
// on that callback's connection, so code that takes a context joins a
// transaction begun around it on that connection, and a pool of one
// connection cannot deadlock on a nested call.
package pgpool
