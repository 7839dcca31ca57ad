package netpool

import (
	"context"
	"errors"
	"net"
	"runtime"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/actorpool/actorpool/internal/errs"
)

// Config says where to connect, how, and how to check and pool the
// connections.
type Config struct {
	// Network and Addr name the service, as for net.Dial: "tcp" and
	// "host:port", "unix" and a socket path. Zero Network means "tcp".
	// Without a Dial of its own, a Config whose Network or Addr net.Dial
	// would refuse is refused when the pool is made.
	Network, Addr string

	// Dial opens a connection, and may run the protocol's handshake on it
	// (a TLS handshake, a login). Nil means a zero net.Dialer's
	// DialContext. Its context ends after Pool.CreateTimeout: that is the
	// connect timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// Ping, if set, checks an idle connection with a round trip of the
	// service's protocol. The pool calls it every Pool.ValidationInterval,
	// after checking that the peer has not closed the connection; the
	// connection's deadline is set to its context's for the call. A Ping
	// that outlives Pool.TestTimeout all the same has the socket under the
	// connection closed: its I/O fails, and the pool closes the connection
	// itself once Ping returns.
	Ping func(ctx context.Context, c *Conn) error

	// Pool sizes the pool and sets its timeouts and housekeeping, as
	// actorpool.Config documents. Pool.CreateTimeout bounds each connect,
	// Dial included. Pool.ValidationInterval sets how often idle
	// connections are checked; zero means never. Zero Pool.MaxObjects
	// means DefaultMaxConns; zero Pool.Name means "netpool".
	Pool actorpool.Config
}

// DefaultMaxConns returns the pool size a Config without one gets: four,
// or the number of CPUs if more, as pgpool and pgxpool size theirs, since
// the pool cannot know what the service can take.
func DefaultMaxConns() int { return max(4, runtime.NumCPU()) }

// withDefaults fills in the zero fields that have netpool defaults and
// checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Network == "" {
		c.Network = "tcp"
	}
	adapter.Defaults(&c.Pool, "netpool", DefaultMaxConns)
	check := errs.NewChecker("netpool")
	switch {
	case c.Addr == "":
		check.Bad("Addr", c.Addr, `must be an address such as "host:port"`)
	case c.Dial == nil:
		if field, value, rule := checkAddr(c.Network, c.Addr); rule != "" {
			check.Bad(field, value, rule)
		}
	}
	return c, errors.Join(check.Err(), c.Pool.Validate())
}

// checkAddr returns the field of network and addr that breaks a rule of
// net.Dial, its value and the rule, or "" for the rule if neither does: an
// address refused here, when the pool is made, would fail every connect.
// A Config with a Dial of its own is not checked: what its network and
// address mean is that Dial's to say.
func checkAddr(network, addr string) (field, value, rule string) {
	switch network {
	case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
		return "Addr", addr, adapter.CheckHostPort(addr, `"host:port"`)
	case "unix", "unixgram", "unixpacket":
		return "Addr", addr, adapter.CheckPath(addr)
	}
	return "Network", network, `must be a network of net.Dial: "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6", "unix", "unixgram" or "unixpacket"; or set Dial`
}
