package pgpool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/internal/adapter"
	"github.com/jackc/pgx/v5"
)

// Config says how to connect to PostgreSQL and how to size and run the
// pool.
type Config struct {
	// ConnConfig is how each connection is made. It must have been
	// created by pgx.ParseConfig or ParseConfig. The pool keeps a copy:
	// what must change between connects, such as a password, is set by
	// BeforeConnect.
	ConnConfig *pgx.ConnConfig

	// BeforeConnect, if set, runs before each connect with that
	// connect's own copy of ConnConfig, which it may change without
	// touching the pool's or another connect's: set a rotated password
	// or a fresh token there, race-free. An error fails the create. As
	// pgxpool's BeforeConnect.
	BeforeConnect func(ctx context.Context, cc *pgx.ConnConfig) error

	// AfterConnect, if set, runs on each new connection before the pool
	// lends it out: register types, prepare statements, set session
	// parameters. An error closes the connection and fails the create.
	AfterConnect func(ctx context.Context, conn *pgx.Conn) error

	// Pool sizes the pool and sets its timeouts and housekeeping, as
	// actorpool.Config documents. Pool.CreateTimeout bounds each connect,
	// AfterConnect included. Pool.ValidationInterval is how often idle
	// connections are pinged. Zero Pool.MaxObjects means DefaultMaxConns;
	// zero Pool.Name means "pgpool".
	Pool actorpool.Config
}

// Defaults that ParseConfig gives a Config, the same as pgxpool's.
const (
	DefaultMaxConnLifetime   = time.Hour
	DefaultMaxConnIdleTime   = 30 * time.Minute
	DefaultHealthCheckPeriod = time.Minute
)

// DefaultMaxConns returns the pool size a Config without one gets: four,
// or the number of CPUs if more, as pgxpool sizes its pool.
func DefaultMaxConns() int { return max(4, runtime.NumCPU()) }

// poolParams are the connection string parameters that configure the
// pool, and the Config fields they set. pgx would send them to the server
// as session parameters, which the server would refuse, so ParseConfig
// takes them out.
var poolParams = map[string]func(c *actorpool.Config, v string) error{
	"pool_max_conns":           intParam(func(c *actorpool.Config, n int) { c.MaxObjects = n }, 1),
	"pool_min_idle_conns":      intParam(func(c *actorpool.Config, n int) { c.MinIdle = n }, 0),
	"pool_max_queue_size":      intParam(func(c *actorpool.Config, n int) { c.MaxQueueSize = n }, 0),
	"pool_max_conn_lifetime":   durationParam(func(c *actorpool.Config, d time.Duration) { c.MaxLifetime = d }),
	"pool_max_conn_idle_time":  durationParam(func(c *actorpool.Config, d time.Duration) { c.MaxIdleTime = d }),
	"pool_health_check_period": durationParam(func(c *actorpool.Config, d time.Duration) { c.ValidationInterval = d }),
	"pool_ping_timeout":        durationParam(func(c *actorpool.Config, d time.Duration) { c.TestTimeout = d }),
}

// unsupportedParams are pgxpool parameters with no equivalent, and what to
// use instead.
var unsupportedParams = map[string]string{
	"pool_min_conns":                "use pool_min_idle_conns, the idle connections kept ready",
	"pool_max_conn_lifetime_jitter": "each lifetime is already shortened by up to a tenth at random",
}

func intParam(set func(*actorpool.Config, int), least int) func(*actorpool.Config, string) error {
	return func(c *actorpool.Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < least {
			return fmt.Errorf("want an integer of at least %d", least)
		}
		set(c, n)
		return nil
	}
}

func durationParam(set func(*actorpool.Config, time.Duration)) func(*actorpool.Config, string) error {
	return func(c *actorpool.Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 90s or 1h30m")
		}
		set(c, d)
		return nil
	}
}

// ParseConfig parses a connection string, as pgx.ParseConfig does, with
// the pool's parameters, which pgxpool also reads:
//
//	pool_max_conns            MaxObjects (default DefaultMaxConns)
//	pool_min_idle_conns       MinIdle (default 0)
//	pool_max_queue_size       MaxQueueSize (default 0: no limit)
//	pool_max_conn_lifetime    MaxLifetime (default DefaultMaxConnLifetime)
//	pool_max_conn_idle_time   MaxIdleTime (default DefaultMaxConnIdleTime)
//	pool_health_check_period  ValidationInterval (default DefaultHealthCheckPeriod)
//	pool_ping_timeout         TestTimeout (default actorpool.DefaultTestTimeout)
//
// The connect_timeout parameter sets Pool.CreateTimeout.
//
//	postgres://app@db.example.com/app?sslmode=verify-full&connect_timeout=5&pool_max_conns=16
func ParseConfig(connString string) (*Config, error) {
	cc, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	cfg := &Config{
		ConnConfig: cc,
		Pool: actorpool.Config{
			Name:               "pgpool",
			MaxObjects:         DefaultMaxConns(),
			MaxLifetime:        DefaultMaxConnLifetime,
			MaxIdleTime:        DefaultMaxConnIdleTime,
			ValidationInterval: DefaultHealthCheckPeriod,
			CreateTimeout:      cc.ConnectTimeout,
		},
	}
	var errs []error
	for name, v := range cc.RuntimeParams {
		if !strings.HasPrefix(name, "pool_") {
			continue
		}
		delete(cc.RuntimeParams, name)
		if set, ok := poolParams[name]; ok {
			if err := set(&cfg.Pool, v); err != nil {
				errs = append(errs, fmt.Errorf("pgpool: %s=%q: %w", name, v, err))
			}
			continue
		}
		if instead, ok := unsupportedParams[name]; ok {
			errs = append(errs, fmt.Errorf("pgpool: %s is not supported: %s", name, instead))
			continue
		}
		errs = append(errs, fmt.Errorf("pgpool: unknown pool parameter %s: want one of %s", name, knownParams()))
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

func knownParams() string {
	names := make([]string, 0, len(poolParams))
	for name := range poolParams {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// withDefaults fills in the zero fields that have pgpool defaults and
// checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.ConnConfig == nil {
		return c, errors.New("pgpool: Config.ConnConfig is nil: make it with ParseConfig or pgx.ParseConfig")
	}
	adapter.Defaults(&c.Pool, "pgpool", DefaultMaxConns)
	return c, c.Pool.Validate()
}
