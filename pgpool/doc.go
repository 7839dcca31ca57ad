// Package pgpool pools PostgreSQL connections (pgx v5's *pgx.Conn) with an
// actorpool.Pool, and is a drop-in for pgx's own pool, pgxpool: a program
// written for pgxpool moves to it by changing one import line,
//
//	import pgxpool "github.com/actorpool/actorpool/pgpool"
//
// and keeps its calls: New and NewWithConfig with a context, ParseConfig
// with every pool_ parameter, Config with pgxpool's fields, defaults and
// hooks, Acquire, AcquireFunc, AcquireAllIdle, Exec, Query, QueryRow,
// SendBatch, CopyFrom, Begin, BeginTx, Ping, Stat, Reset, Close, Conn with
// Release and Hijack, Tx, and the acquire and release tracers. pgxpool's
// own tests pass against it (see the compat directory of the repository).
//
//	pool, err := pgpool.New(ctx, "postgres://app@127.0.0.1/app?pool_max_conns=16")
//	...
//	defer pool.Close()
//	var n int
//	err = pool.QueryRow(ctx, "SELECT count(*) FROM users WHERE active").Scan(&n)
//
// # What it adds
//
// Pool.With lends a connection for the length of a callback, and the
// pool's methods called with the callback's context run on that
// connection: code that takes a context joins a transaction begun around
// it, and a pool of one cannot deadlock on a nested call. Pool.Shutdown is
// Close bounded by a context. Pool.Stats returns every counter of
// actorpool.Stats: waits, timeouts, create errors, destroys by cause,
// leaks. Config.Pool holds the settings pgxpool lacks: a limit on the
// takers waiting (MaxQueueSize, pool_max_queue_size), past which a take
// fails at once with actorpool.ErrPoolExhausted; LeakThreshold; an
// Observer for latency metrics; a Logger. Conn.Destroy closes a connection
// the caller knows is broken. A Conn dropped without being given back is
// found by the garbage collector, logged with LEAK-DETECTED and closed.
// Package pgpool/otelpgpool traces takes and exports the pool's stats with
// OpenTelemetry.
//
// # What differs from pgxpool, and why
//
// None of these changes what a pgxpool program may rely on; each is listed
// so that nothing surprises.
//
//   - Connections idle for a second or more are not pinged when taken,
//     unless Config.ShouldPing asks for it: the pool looks at the socket
//     instead (below), which costs no round trip.
//   - MaxConnIdleTime and MaxConnLifetime are enforced within a quarter of
//     themselves by the pool's own goroutine, not at the next health check
//     or take; and without MaxConnLifetimeJitter, lifetimes are shortened
//     by up to a tenth at random, so that connections made together do not
//     all close together.
//   - The health check, every HealthCheckPeriod, also pings each idle
//     connection, bounded by PingTimeout (or actorpool.DefaultTestTimeout),
//     which finds servers that stopped answering.
//   - A failed connect, for a take or for MinConns or MinIdleConns, is
//     tried again after 10 ms, doubling to 100 ms, one at a time — at most
//     ten a second while the server is down — rather than once per take,
//     or at the next health check. A take whose context ends while it
//     waits for the next try returns an error that matches both its
//     context's error and the last connect's (a *pgconn.ConnectError),
//     where pgxpool's take would have returned its own connect's. As with pgxpool, pgx gives each host it tries connect_timeout,
//     or else two minutes; the pool also bounds the whole connect, hooks
//     included, by that once for each host and once more, where pgxpool
//     leaves a hook that hangs unbounded.
//   - MaxConnIdleTime zero means that idle connections are never closed
//     for their idle time, as database/sql's SetConnMaxIdleTime(0) means;
//     pgxpool would close every idle connection above MinConns at each
//     health check.
//   - AfterRelease runs on every connection given back fit for reuse,
//     one past its lifetime included, which the pool's goroutine then
//     closes; pgxpool closes that one at once, without the hook.
//   - BeforeConnect and AfterConnect see the values of the context given to
//     New, not those of the take that caused the connect: a connect is made
//     for the pool, and may serve another take.
//   - NewWithConfig returns an error for a Config not made by ParseConfig,
//     or one that breaks a rule (MinConns above MaxConns, a negative count
//     or duration), where pgxpool panics or misbehaves. ParseConfig
//     refuses a negative pool_min_conns, and a pool_ parameter it does not
//     know, which pgxpool would send to the server, which refuses every
//     connect for it.
//   - MaxConns above MaxConnsCeiling (10,000) is taken as that: the pool
//     sets aside a place for each connection up front.
//   - Stat's AcquireDuration and EmptyAcquireWaitTime count the time takes
//     spent waiting; a take that finds a connection idle reads no clock.
//   - The pool logs failed connects, failed health checks and leaks to
//     Config.Pool.Logger, slog.Default() unless set.
//
// # What the pool checks
//
// A connection given back closed, busy (rows not closed, a batch not
// closed) or inside a transaction — open, or failed and awaiting a
// ROLLBACK — is closed, not handed to the next caller and not rolled back:
// closing it makes the server roll the transaction back and drop
// everything it held, with no round trip on the path that gives the
// connection back. These checks are in memory. pgxpool does the same.
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
// of the caller who takes it (the connection is then replaced).
//
// A health check ping that outlives PingTimeout has its connection closed
// under it: the pool cuts the socket, which ends the ping, and the ping's
// goroutine then says goodbye to the server and runs BeforeClose, so that
// the pgx.Conn is never used by two goroutines at once.
//
// # Giving connections back
//
// The pool's one-call methods give their connection back when done with
// it: Query's when the rows are closed, read to the end, or a Scan or
// Values fails (pgx closes the rows then), so that code that returns on a
// Scan error without closing the rows leaks nothing; QueryRow's when the
// row is scanned, even if a destination's scanner panics (the connection,
// its result unread, is then closed, and the panic goes on); Begin's when
// the transaction is committed or rolled back. A Query that fails, or gets
// no connection, returns rows that carry its error, never nil rows.
// pgxpool does the same.
//
// # Credentials
//
// Config.BeforeConnect runs before each connect with that connect's own
// copy of ConnConfig: set a rotated password or a short-lived token there,
// as with pgxpool's BeforeConnect. The pool keeps copies of the Config and
// ConnConfig it was made with, and Pool.Config returns a copy, so that
// nothing changes them under a connect; Pool.Reset makes every session log
// in again.
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
// # database/sql
//
// pgx's stdlib package cannot put a *sql.DB over this pool: its only way
// to take connections from a pool, stdlib.OpenDBFromPool, takes a
// *pgxpool.Pool, and its driver connection type has no exported
// constructor, so no other pool can hand it a connection. For sqlx, bun,
// gorm or goose, open a *sql.DB with the same settings, as its own small
// pool beside this one:
//
//	db := stdlib.OpenDB(*pool.Config().ConnConfig)
//	db.SetMaxOpenConns(2)
package pgpool
