// Package redispool pools connections to a Redis server with an
// actorpool.Pool.
//
// Connections are redigo connections (github.com/gomodule/redigo/redis). A
// redigo connection is one network connection and nothing more: no pool of
// its own, no background goroutine, no retries, so the pool owns it
// entirely. It records the network or protocol error that broke it, which
// lets the pool decide without I/O whether it may be reused, and redigo's
// reply helpers (redis.String, redis.Values, redis.ScanStruct),
// redis.Script and redis.PubSubConn work on any redis.Conn, including the
// pool's. go-redis, by contrast, hides its connections behind a pool of its
// own.
//
// # Using the pool
//
// Pool.Do runs one command on a pooled connection:
//
//	pool, err := redispool.New("127.0.0.1:6379")
//	...
//	n, err := redis.Int(pool.Do(ctx, "INCR", "visits"))
//
// NewWithConfig takes a Config, for the pool's size and housekeeping and
// redigo's dial options:
//
//	pool, err := redispool.NewWithConfig(&redispool.Config{
//		Addr: "127.0.0.1:6379",
//		Pool: actorpool.Config{MaxObjects: 16, ValidationInterval: 30 * time.Second},
//	})
//
// Pool.Acquire lends a Conn for several commands — a pipeline, a
// MULTI/EXEC transaction, a subscription — until Conn.Release gives it
// back; Pool.With does the same for the length of a callback, and a Do on
// the callback's context uses the callback's connection.
//
// # What the pool checks
//
// A connection is not handed to the next caller when it saw a network or
// protocol error, when a command on it was interrupted by its context, when
// it has replies unread, or when it is inside MULTI, WATCH, SUBSCRIBE or
// MONITOR: the pool closes it and opens another. It does not clean such a
// connection with DISCARD or UNSUBSCRIBE, because that would be I/O on the
// path that gives it back, which must stay fast; a new connection costs one
// connect, made off that path. An error reply (redis.Error) leaves the
// connection as it was, and in the pool.
//
// Before it hands out a connection that sat idle across a tick of a
// one-second clock, the pool looks at its socket, with one non-blocking
// system call and no round trip: a connection whose session the server
// ended (a restart, CLIENT KILL, its idle timeout) shows the end of its
// stream there, and one that has data waiting, which an idle connection
// with no replies owed never should, is as unfit; either is closed and
// another taken or opened, and the caller never sees it. A connection
// taken again within a tick is not looked at, so a busy pool makes no
// system call on most takes; go-redis makes one on every take. Under TLS
// the look sees records, not replies: it finds the end of the stream and
// a TLS alert (close_notify), and leaves other records — a TLS 1.3 session
// ticket waits there until the first command — for the TLS layer to read,
// unless the stream ends behind them, as it does behind TLS 1.3's
// close_notify, which looks like any other record; that end is seen on
// Linux only.
// It is made on TCP and Unix sockets on Linux and the BSDs.
//
// Every Config.Pool.ValidationInterval the pool also sends PING on each
// idle connection, which finds what the look cannot: a server that stopped
// answering without closing anything. A PING that outlives
// Config.Pool.TestTimeout has its socket closed under it.
//
// # Contexts
//
// Pool.Do and Conn.DoContext end when their context does: the connection
// is closed under the blocked command, which fails with the context's
// error, and the pool replaces the connection. This costs no goroutine per
// command, unlike redigo's own DoContext.
package redispool
