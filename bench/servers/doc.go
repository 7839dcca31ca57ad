// Package servers compares actorpool's adapters with the pools people use
// today for the same servers, on real servers: pgpool with pgxpool and
// database/sql over pgx's stdlib driver on PostgreSQL, and redispool with
// go-redis and redigo's own Pool on Redis.
//
// Each pool is used through its library's idiomatic call — QueryRow(...).Scan
// on pgpool and pgxpool, DB.QueryRowContext(...).Scan on database/sql, Do on
// redispool, Client.Get and Client.Set on go-redis, Pool.Get, Conn.Do and
// Conn.Close on redigo — behind one of two small interfaces, PostgresPool
// and RedisPool, so that one workload, Run, drives each of them. Every
// pool has the same size, Size, and is warmed (Size connections opened and
// each used once) before it is timed, so that connecting is not measured.
//
// The servers are named by the environment variables ACTORPOOL_POSTGRES (a
// connection URL) and ACTORPOOL_REDIS (host:port), the ones .ci/run sets,
// with defaults for a server on this machine. Need skips a benchmark or
// test whose server cannot be reached, saying how to run it, and fails it
// instead when the environment variable CI is set. Prepare creates the
// data the operations read: a table of KeySpace rows in PostgreSQL and
// KeySpace keys in Redis.
//
// Check proves, before anything is measured, that a pool answers each
// operation with the right value, alone and with many goroutines at once,
// opens the connections it is asked to and no more than its size.
package servers
