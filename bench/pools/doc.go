// Package pools puts every object pool under comparison behind one small
// interface, Pool, so that the same workloads drive each of them.
//
// The pools are actorpool; jackc/puddle v2, the pool under pgxpool;
// database/sql's connection pool over a driver that does nothing; vitess
// smartconnpool; go-commons-pool v2; three pools written here from the
// descriptions of well-known designs — a buffered channel, a mutex and
// condition variable guarding a LIFO stack (Ruby connection_pool's
// TimedStack), and a pool owned by one goroutine that serves every take and
// give-back through its mailbox (the original actor pool), alone and split
// in partitions; and sync.Pool, which bounds nothing and stands for the
// cost of a get and a put.
//
// Every pool lends *Object values made by a Factory, which counts what it
// creates and destroys, so that Check can prove that a pool never has more
// objects alive than its size, never lends one object to two holders, and
// gets every object back.
package pools
