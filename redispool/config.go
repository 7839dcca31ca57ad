package redispool

import (
	"context"
	"errors"
	"net"
	"runtime"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/actorpool/actorpool/internal/errs"
	"github.com/gomodule/redigo/redis"
)

// Config says where the server is, how to connect to it, and how to size
// and run the pool.
type Config struct {
	// Addr is the server's address: "host:port" (or a socket path with
	// Network "unix"), or a redis:// or rediss:// URL, which may carry a
	// user, password and database number.
	Addr string

	// Network is "tcp" or "unix". Zero means "tcp". It is ignored when Addr
	// is a URL.
	Network string

	// DialOptions go to redigo's DialContext or DialURLContext: password,
	// database, client name, TLS, read and write timeouts. Options that say
	// how to open the network connection (DialContextFunc, DialNetDial,
	// DialConnectTimeout, DialKeepAlive) are overridden; use Dial and
	// Pool.CreateTimeout instead.
	DialOptions []redis.DialOption

	// Dial opens the network connection. Nil means a zero net.Dialer's
	// DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// Pool sizes the pool and sets its timeouts and housekeeping, as
	// actorpool.Config documents. Pool.CreateTimeout bounds the whole
	// connect: dial, TLS handshake, AUTH, CLIENT SETNAME and SELECT.
	// Zero Pool.MaxObjects means DefaultMaxConns; zero Pool.Name means
	// "redispool". Idle connections the server has closed are found
	// without it (see the package doc); set Pool.ValidationInterval so
	// that a PING finds those behind a server that stopped answering.
	Pool actorpool.Config
}

// DefaultMaxConns returns the MaxObjects a Config without one gets: ten
// connections per GOMAXPROCS, as go-redis sizes its pool, since a Redis
// command spends most of its time waiting on the network.
func DefaultMaxConns() int { return 10 * runtime.GOMAXPROCS(0) }

// withDefaults fills in the zero fields that have redispool defaults and
// checks the rest.
func (c Config) withDefaults() (Config, error) {
	adapter.Defaults(&c.Pool, "redispool", DefaultMaxConns)
	check := errs.NewChecker("redispool")
	if rule := checkAddr(c.Network, c.Addr); rule != "" {
		check.Bad("Addr", redact(c.Network, c.Addr), rule)
	}
	switch c.Network {
	case "", "tcp", "tcp4", "tcp6", "unix":
	default:
		check.Bad("Network", c.Network, `must be "tcp", "tcp4", "tcp6" or "unix"`)
	}
	return c, errors.Join(check.Err(), c.Pool.Validate())
}
