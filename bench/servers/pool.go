package servers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/actorpool/actorpool/bench/internal/pick"
)

// Size is the number of connections of every pool under comparison.
const Size = 16

// KeySpace is how many rows the PostgreSQL table holds and how many keys
// Redis holds: ids and key indexes 0 to KeySpace-1.
const KeySpace = 1000

// Keys are the Redis keys the operations read and write, and Values what
// each holds, which is also what the PostgreSQL row of the same id holds:
// "actorpool:bench:42" and row 42 hold "v42". Computed once, so that no
// operation formats a key.
var Keys, Values = func() ([]string, []string) {
	keys, values := make([]string, KeySpace), make([]string, KeySpace)
	for i := range KeySpace {
		keys[i] = "actorpool:bench:" + strconv.Itoa(i)
		values[i] = "v" + strconv.Itoa(i)
	}
	return keys, values
}()

// missingKey and missingID name a key and a row that Prepare makes sure do
// not exist.
const (
	missingKey = "actorpool:bench:missing"
	missingID  = -1
)

// ErrNotFound is returned, wrapped, for a row or key that does not exist.
var ErrNotFound = errors.New("servers: not found")

// A Pool is a pool of connections to one server.
type Pool interface {
	// Warm takes n connections at once, runs every operation of its
	// server on each, and gives them back, so that a pool of size n then
	// holds n connections, each ready (pgx's statement caches filled).
	Warm(ctx context.Context, n int) error
	// Open returns how many connections the pool holds now, idle or in
	// use.
	Open() int
	// Close closes the pool and its connections. Every operation must have
	// returned.
	Close() error
}

// A PostgresPool is a pool of PostgreSQL connections used the way its
// library is meant to be.
type PostgresPool interface {
	Pool
	// Select1 runs SELECT 1 and returns what it scanned.
	Select1(ctx context.Context) (int, error)
	// Lookup returns the v of row id of actorpool_bench_kv, or an error
	// wrapping ErrNotFound.
	Lookup(ctx context.Context, id int) (string, error)
}

// A RedisPool is a pool of Redis connections used the way its library is
// meant to be.
type RedisPool interface {
	Pool
	// Get returns the value of key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) (string, error)
	// Set sets key to value.
	Set(ctx context.Context, key, value string) error
}

// A Contender is a pool under comparison.
type Contender struct {
	// Name names the pool in benchmark names and tables: lower case, no
	// spaces or slashes.
	Name string
	// Server is the server it pools connections to.
	Server Server
	// Ours is true for actorpool's adapters, the pools the others are
	// compared with.
	Ours bool
	// New returns a pool of size connections to the server at addr (a URL
	// for PostgreSQL, host:port for Redis), a PostgresPool or a RedisPool
	// as Server says, that opens its connections with dial, or as its
	// library does by default when dial is nil. It connects to nothing
	// yet.
	New func(addr string, size int, dial Dialer) (Pool, error)
}

// A Dialer opens a network connection, as net.Dialer.DialContext does: the
// outage measurement gives one to count a pool's connection attempts.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// All returns every pool under comparison: for PostgreSQL pgpool, pgxpool
// and sql, then for Redis redispool, go-redis and redigo; ours first.
func All() []Contender {
	return []Contender{
		{Name: "pgpool", Server: Postgres, Ours: true, New: newPgpool},
		{Name: "pgxpool", Server: Postgres, New: newPgxpool},
		{Name: "sql", Server: Postgres, New: newSQL},
		{Name: "redispool", Server: Redis, Ours: true, New: newRedispool},
		{Name: "go-redis", Server: Redis, New: newGoRedis},
		{Name: "redigo", Server: Redis, New: newRedigo},
	}
}

// Of returns the contenders of server s among cs, in their order.
func Of(cs []Contender, s Server) []Contender {
	var out []Contender
	for _, c := range cs {
		if c.Server == s {
			out = append(out, c)
		}
	}
	return out
}

// Baseline returns the name of our pool for server s, the one the others
// are compared with.
func Baseline(s Server) string {
	for _, c := range All() {
		if c.Server == s && c.Ours {
			return c.Name
		}
	}
	return ""
}

// Select returns the contenders named in a comma-separated list, in the
// order of All, or all of them for an empty list.
func Select(list string) ([]Contender, error) {
	cs, err := pick.Named(All(), func(c Contender) string { return c.Name }, list, "pool")
	if err != nil {
		return nil, fmt.Errorf("servers: %w", err)
	}
	return cs, nil
}

// warm takes n connections at once with take, calls use on each, and gives
// them all back once every take has returned, so that the pool, finding
// none idle, opens n. take returns the connection's use and give-back.
func warm(ctx context.Context, n int, take func(ctx context.Context) (use func() error, giveBack func(), err error)) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		gives []func()
		errs  []error
	)
	for range n {
		wg.Go(func() {
			use, giveBack, err := take(ctx)
			if err == nil {
				err = use()
			}
			mu.Lock()
			defer mu.Unlock()
			if giveBack != nil {
				gives = append(gives, giveBack)
			}
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	// None is given back before every take has returned: a take cannot
	// be served by another's connection.
	wg.Wait()
	for _, g := range gives {
		g()
	}
	if len(errs) > 0 {
		return fmt.Errorf("warming %d connections: %d failed, the first with: %w", n, len(errs), errs[0])
	}
	return nil
}
