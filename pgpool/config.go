package pgpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/errs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Config says how to connect to PostgreSQL and how to size and run the
// pool. Its fields, their meaning and their defaults are pgxpool's; Pool
// holds what pgpool adds. A Config must be made by ParseConfig, which sets
// the defaults, and may then be changed.
type Config struct {
	// ConnConfig is how each connection is made. The pool keeps a copy:
	// what must change between connects, such as a password, is set by
	// BeforeConnect. If its Tracer implements AcquireTracer or
	// ReleaseTracer, the pool reports takes and give-backs to it.
	ConnConfig *pgx.ConnConfig

	// BeforeConnect, if set, runs before each connect with that
	// connect's own copy of ConnConfig, which it may change without
	// touching the pool's or another connect's: set a rotated password or
	// a fresh token there. An error fails the connect.
	BeforeConnect func(context.Context, *pgx.ConnConfig) error

	// AfterConnect, if set, runs on each new connection before the pool
	// lends it out: register types, prepare statements, set session
	// parameters. An error closes the connection and fails the connect.
	AfterConnect func(context.Context, *pgx.Conn) error

	// BeforeAcquire is called before a connection is lent out. It returns
	// true to lend it, or false to have it closed and another taken.
	//
	// Deprecated: Use PrepareConn, which takes precedence when both are
	// set.
	BeforeAcquire func(context.Context, *pgx.Conn) bool

	// PrepareConn, if set, is called before a connection is lent out, with
	// the context of the take:
	//
	//   - true and nil: the connection is lent;
	//   - true and an error: the connection goes back to the pool, and the
	//     take fails with the error;
	//   - false and an error: the connection is closed, and the take fails
	//     with the error;
	//   - false and nil: the connection is closed, and the take tries
	//     another.
	PrepareConn func(context.Context, *pgx.Conn) (bool, error)

	// AfterRelease, if set, is called when a connection is given back in a
	// state fit for reuse (not closed, busy or inside a transaction), on a
	// goroutine of its own so that the giver does not wait for it. It
	// returns true to keep the connection, or false to have it closed.
	AfterRelease func(*pgx.Conn) bool

	// BeforeClose, if set, is called right before the pool closes a
	// connection.
	BeforeClose func(*pgx.Conn)

	// ShouldPing, if set, is called when a connection is taken from the
	// idle ones, with how long it sat idle; if it returns true, the
	// connection is pinged, and closed and replaced if the ping fails.
	// Unset, the pool pings no connection when taking it: it looks at the
	// socket of a connection idle for a second or more instead (see the
	// package documentation), where pgxpool pings it.
	ShouldPing func(context.Context, ShouldPingParams) bool

	// MaxConnLifetime is how long a connection may live: idle ones past it
	// are closed, ones in use when given back. Zero means no limit;
	// ParseConfig sets an hour.
	MaxConnLifetime time.Duration

	// MaxConnLifetimeJitter is a random amount, up to this, added to each
	// connection's lifetime so that connections made together do not all
	// close together. Zero shortens each lifetime by up to a tenth of
	// MaxConnLifetime instead, for the same reason.
	MaxConnLifetimeJitter time.Duration

	// MaxConnIdleTime is how long a connection may sit idle before it is
	// closed. Zero means no limit; ParseConfig sets 30 minutes.
	MaxConnIdleTime time.Duration

	// PingTimeout bounds a ping that ShouldPing asked for; zero means the
	// take's own deadline alone, and a ping whose take gave up meanwhile
	// gets a minute more to finish. It also bounds the health check's
	// pings, where zero means actorpool.DefaultTestTimeout.
	PingTimeout time.Duration

	// MaxConns is the most connections open at once, counting those being
	// made. ParseConfig sets the greater of 4 and the number of CPUs.
	// Values above MaxConnsCeiling, such as math.MaxInt32 for "no
	// limit", are taken as MaxConnsCeiling.
	MaxConns int32

	// MinConns is how many connections the pool keeps open, idle or in
	// use; it opens more in the background when fewer are.
	MinConns int32

	// MinIdleConns is how many idle connections the pool keeps ready; it
	// opens more in the background when fewer are idle.
	MinIdleConns int32

	// HealthCheckPeriod is how often idle connections are pinged.
	// ParseConfig sets a minute; zero means never. Idle time and lifetime
	// are enforced within a quarter of themselves, whatever it is.
	HealthCheckPeriod time.Duration

	// Pool holds the pool settings pgxpool has no field for: the wait
	// queue's limit (MaxQueueSize), CreateTimeout, LeakThreshold,
	// TraceAcquires, HandoffAfter, FIFO, Name, Logger and Observer; see
	// actorpool.Config. Its fields that the fields above set — MaxObjects,
	// MinObjects, MinIdle, MaxIdleTime, MaxLifetime, LifetimeJitter,
	// TestTimeout and ValidationInterval — must be left zero.
	// CreateTimeout bounds each connect with its hooks; zero means
	// ConnConfig.ConnectTimeout, or two minutes when that is zero, once
	// for each host the connection string names and once more. pgx
	// bounds each address it tries by ConnectTimeout, or two minutes, as
	// pgxpool has it do, so that a host that never answers leaves the
	// next one its own time.
	Pool actorpool.Config

	createdByParseConfig bool
}

// Defaults that ParseConfig gives a Config, the same as pgxpool's.
const (
	DefaultMaxConnLifetime   = time.Hour
	DefaultMaxConnIdleTime   = 30 * time.Minute
	DefaultHealthCheckPeriod = time.Minute

	// defaultConnectTimeout bounds each host of a connect whose
	// ConnConfig has no ConnectTimeout, as pgxpool does.
	defaultConnectTimeout = 2 * time.Minute
)

// MaxConnsCeiling is the most connections a pool may hold. The pool sets
// aside a place for each of them up front, about 250 bytes; pgxpool users
// who set MaxConns to math.MaxInt32 to mean "no limit" get this many, a
// hundred times PostgreSQL's default max_connections.
const MaxConnsCeiling = 10_000

// DefaultMaxConns returns the pool size ParseConfig sets: four, or the
// number of CPUs if more, as pgxpool sizes its pool.
func DefaultMaxConns() int32 { return int32(max(4, runtime.NumCPU())) }

// ParseConfig parses a connection string, as pgx.ParseConfig does, with
// pgxpool's pool parameters, which it takes out of the session parameters
// sent to the server:
//
//	pool_max_conns                 MaxConns (default DefaultMaxConns)
//	pool_min_conns                 MinConns (default 0)
//	pool_min_idle_conns            MinIdleConns (default 0)
//	pool_max_conn_lifetime         MaxConnLifetime (default DefaultMaxConnLifetime)
//	pool_max_conn_lifetime_jitter  MaxConnLifetimeJitter (default 0)
//	pool_max_conn_idle_time        MaxConnIdleTime (default DefaultMaxConnIdleTime)
//	pool_health_check_period       HealthCheckPeriod (default DefaultHealthCheckPeriod)
//	pool_ping_timeout              PingTimeout (default 0)
//
// and pgpool's own:
//
//	pool_max_queue_size            Pool.MaxQueueSize (default 0: no limit)
//
// A pool_ parameter it does not know is an error, where pgxpool would send
// it to the server, which refuses every connect for it.
//
//	postgres://app@db.example.com/app?sslmode=verify-full&pool_max_conns=16&pool_max_queue_size=256
func ParseConfig(connString string) (*Config, error) {
	cc, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	c := &Config{
		ConnConfig:           cc,
		MaxConns:             DefaultMaxConns(),
		MaxConnLifetime:      DefaultMaxConnLifetime,
		MaxConnIdleTime:      DefaultMaxConnIdleTime,
		HealthCheckPeriod:    DefaultHealthCheckPeriod,
		createdByParseConfig: true,
	}
	var errList []error
	for _, name := range sortedKeys(cc.RuntimeParams) {
		if !strings.HasPrefix(name, "pool_") {
			continue
		}
		v := cc.RuntimeParams[name]
		delete(cc.RuntimeParams, name)
		p, ok := poolParams[name]
		if !ok {
			errList = append(errList, pgconn.NewParseConfigError(connString,
				fmt.Sprintf("unknown pool parameter %s: want one of %s", name, knownParams()), nil))
			continue
		}
		if err := p(c, v); err != nil {
			errList = append(errList, pgconn.NewParseConfigError(connString, "cannot parse "+name, err))
		}
	}
	switch len(errList) {
	case 0:
	case 1:
		return nil, errList[0] // the *pgconn.ParseConfigError itself, as pgxpool returns it
	default:
		return nil, errors.Join(errList...)
	}
	return c, nil
}

// poolParams are the connection string parameters that configure the
// pool, and how each sets its Config field.
var poolParams = map[string]func(c *Config, v string) error{
	"pool_max_conns":                int32Param(func(c *Config) *int32 { return &c.MaxConns }, 1),
	"pool_min_conns":                int32Param(func(c *Config) *int32 { return &c.MinConns }, 0),
	"pool_min_idle_conns":           int32Param(func(c *Config) *int32 { return &c.MinIdleConns }, 0),
	"pool_max_conn_lifetime":        durationParam(func(c *Config) *time.Duration { return &c.MaxConnLifetime }),
	"pool_max_conn_lifetime_jitter": durationParam(func(c *Config) *time.Duration { return &c.MaxConnLifetimeJitter }),
	"pool_max_conn_idle_time":       durationParam(func(c *Config) *time.Duration { return &c.MaxConnIdleTime }),
	"pool_health_check_period":      durationParam(func(c *Config) *time.Duration { return &c.HealthCheckPeriod }),
	"pool_ping_timeout":             durationParam(func(c *Config) *time.Duration { return &c.PingTimeout }),
	"pool_max_queue_size": func(c *Config, v string) error {
		n, err := int32Parse(v, 0)
		c.Pool.MaxQueueSize = int(n)
		return err
	},
}

func int32Param(field func(*Config) *int32, least int32) func(*Config, string) error {
	return func(c *Config, v string) (err error) {
		*field(c), err = int32Parse(v, least)
		return err
	}
}

func int32Parse(v string, least int32) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err == nil && n < int64(least) {
		err = fmt.Errorf("too small: want at least %d", least)
	}
	return int32(n), err
}

func durationParam(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) (err error) {
		*field(c), err = time.ParseDuration(v)
		return err
	}
}

func knownParams() string { return strings.Join(sortedKeys(poolParams), ", ") }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Copy returns a deep copy of the Config, safe to change; its ConnConfig
// is a copy too (pgx.ConnConfig.Copy), which shares only the tls.Config,
// as that must not be changed after use.
func (c *Config) Copy() *Config {
	n := *c
	n.ConnConfig = c.ConnConfig.Copy()
	return &n
}

// ConnString returns the connection string that ParseConfig parsed.
func (c *Config) ConnString() string { return c.ConnConfig.ConnString() }

// poolConfig returns the actorpool.Config that runs the pool: Pool, with
// the fields that the pgxpool fields set filled in from them.
func (c *Config) poolConfig() (actorpool.Config, error) {
	check := errs.NewChecker("pgpool")
	p := c.Pool
	for _, f := range []struct {
		name, instead string
		set           bool
	}{
		{"MaxObjects", "MaxConns", p.MaxObjects != 0},
		{"MinObjects", "MinConns", p.MinObjects != 0},
		{"MinIdle", "MinIdleConns", p.MinIdle != 0},
		{"MaxIdleTime", "MaxConnIdleTime", p.MaxIdleTime != 0},
		{"MaxLifetime", "MaxConnLifetime", p.MaxLifetime != 0},
		{"LifetimeJitter", "MaxConnLifetimeJitter", p.LifetimeJitter != 0},
		{"TestTimeout", "PingTimeout", p.TestTimeout != 0},
		{"ValidationInterval", "HealthCheckPeriod", p.ValidationInterval != 0},
	} {
		if f.set {
			check.Bad("Pool."+f.name, "set", "must be zero: set Config."+f.instead+" instead")
		}
	}
	if c.MaxConns < 1 {
		check.Bad("MaxConns", c.MaxConns, "must be at least 1")
	}
	for _, f := range []struct {
		name string
		n    int32
	}{{"MinConns", c.MinConns}, {"MinIdleConns", c.MinIdleConns}} {
		switch {
		case f.n < 0:
			check.Bad(f.name, f.n, "must not be negative (0 keeps none)")
		case f.n > c.MaxConns && c.MaxConns >= 1:
			check.Bad(f.name, f.n, fmt.Sprintf("must not exceed MaxConns (%d)", c.MaxConns))
		}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
		zero string
	}{
		{"MaxConnLifetime", c.MaxConnLifetime, "no limit"},
		{"MaxConnLifetimeJitter", c.MaxConnLifetimeJitter, "a tenth of MaxConnLifetime, taken off"},
		{"MaxConnIdleTime", c.MaxConnIdleTime, "no limit"},
		{"PingTimeout", c.PingTimeout, "the take's deadline"},
		{"HealthCheckPeriod", c.HealthCheckPeriod, "never"},
	} {
		errs.NotNegative(check, f.name, f.d, f.zero)
	}
	if err := check.Err(); err != nil {
		return p, err
	}
	if p.Name == "" {
		p.Name = "pgpool"
	}
	p.MaxObjects = int(min(c.MaxConns, MaxConnsCeiling))
	p.MinObjects = int(c.MinConns)
	p.MinIdle = int(c.MinIdleConns)
	p.MaxIdleTime = c.MaxConnIdleTime
	p.MaxLifetime = c.MaxConnLifetime
	if j := c.MaxConnLifetimeJitter; j > 0 && p.MaxLifetime > 0 {
		// pgxpool adds up to the jitter to the lifetime; actorpool takes
		// up to LifetimeJitter off it.
		p.MaxLifetime += j
		p.LifetimeJitter = j
	}
	p.TestTimeout = c.PingTimeout
	p.ValidationInterval = c.HealthCheckPeriod
	if p.CreateTimeout == 0 {
		// pgx bounds each address it tries by ConnectTimeout, so a host
		// that never answers leaves the next its own. The pool's bound on
		// the whole connect is only for hooks that hang: that much for
		// each host, and once more for the hooks, a host's second address
		// or pgx's retry of a host it did not prefer.
		p.CreateTimeout = connectTimeout(c.ConnConfig) * time.Duration(hosts(c.ConnConfig)+1)
	}
	return p, p.Validate()
}

// connectTimeout returns how long pgx may spend on each host a connect
// tries: cc's ConnectTimeout, or two minutes when it has none, as pgxpool
// sets it, since a connect goes on in the background after the take that
// asked for it gave up.
func connectTimeout(cc *pgx.ConnConfig) time.Duration {
	if cc.ConnectTimeout > 0 {
		return cc.ConnectTimeout
	}
	return defaultConnectTimeout
}

// hosts returns how many hosts a connect may try, each bounded by the
// connect timeout: cc's host and its fallbacks, counting once a host that
// is tried twice in a row (with TLS, then without, under sslmode=prefer),
// as pgx does. A host name that resolves to several addresses counts once.
func hosts(cc *pgx.ConnConfig) int {
	n, last := 1, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
	for _, fb := range cc.Fallbacks {
		if a := net.JoinHostPort(fb.Host, strconv.Itoa(int(fb.Port))); a != last {
			n, last = n+1, a
		}
	}
	return n
}
