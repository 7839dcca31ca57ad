package pgpool

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestParseConfig(t *testing.T) {
	const base = "postgres://u@127.0.0.1:5432/db?sslmode=disable"
	tests := []struct {
		name  string
		query string
		check func(t *testing.T, c *Config)
		want  string // substring of the error; empty for none
	}{
		{"pgxpool's defaults", "", func(t *testing.T, c *Config) {
			if c.MaxConns != DefaultMaxConns() || c.MinConns != 0 || c.MinIdleConns != 0 ||
				c.MaxConnLifetime != time.Hour || c.MaxConnLifetimeJitter != 0 || c.MaxConnIdleTime != 30*time.Minute ||
				c.HealthCheckPeriod != time.Minute || c.PingTimeout != 0 || c.Pool != (actorpool.Config{}) {
				t.Errorf("Config = %+v", c)
			}
		}, ""},
		{"every pool parameter", "&pool_max_conns=7&pool_min_conns=1&pool_min_idle_conns=2&pool_max_queue_size=50" +
			"&pool_max_conn_lifetime=2h&pool_max_conn_lifetime_jitter=5m&pool_max_conn_idle_time=90s" +
			"&pool_health_check_period=15s&pool_ping_timeout=2s",
			func(t *testing.T, c *Config) {
				if c.MaxConns != 7 || c.MinConns != 1 || c.MinIdleConns != 2 || c.Pool.MaxQueueSize != 50 ||
					c.MaxConnLifetime != 2*time.Hour || c.MaxConnLifetimeJitter != 5*time.Minute ||
					c.MaxConnIdleTime != 90*time.Second || c.HealthCheckPeriod != 15*time.Second || c.PingTimeout != 2*time.Second {
					t.Errorf("Config = %+v", c)
				}
				for name := range c.ConnConfig.RuntimeParams {
					if strings.HasPrefix(name, "pool_") {
						t.Errorf("%s left in the session parameters sent to the server", name)
					}
				}
			}, ""},
		{"session parameters kept", "&application_name=app&search_path=s", func(t *testing.T, c *Config) {
			if got := c.ConnConfig.RuntimeParams["application_name"]; got != "app" {
				t.Errorf("application_name = %q, want app", got)
			}
		}, ""},
		{"zero max conns", "&pool_max_conns=0", nil, "cannot parse pool_max_conns (too small: want at least 1)"},
		{"bad duration", "&pool_max_conn_lifetime=soon", nil, "cannot parse pool_max_conn_lifetime"},
		{"unknown", "&pool_size=3", nil, "unknown pool parameter pool_size: want one of pool_health_check_period, pool_max_conn_idle_time"},
		{"two errors", "&pool_max_conns=x&pool_size=3", nil, "pool_max_conns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig(base + tt.query)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("ParseConfig: %v, want an error containing %q", err, tt.want)
				}
				var pe *pgconn.ParseConfigError
				if !errors.As(err, &pe) {
					t.Errorf("ParseConfig's error is a %T, want a *pgconn.ParseConfigError as pgxpool's", err)
				}
				if _, ok := err.(*pgconn.ParseConfigError); !ok && !strings.Contains(tt.name, "two") {
					t.Errorf("ParseConfig's one error is a %T, want the *pgconn.ParseConfigError itself, as pgxpool returns it", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

// The pool runs on an actorpool.Config made from the pgxpool fields, and
// Pool's own extras.
func TestPoolConfig(t *testing.T) {
	c, err := ParseConfig("postgres://u@127.0.0.1:5432/db?connect_timeout=3&pool_max_conns=9&pool_min_conns=2" +
		"&pool_min_idle_conns=1&pool_max_conn_lifetime=1h&pool_max_conn_lifetime_jitter=10m&pool_ping_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	c.Pool.LeakThreshold = time.Minute
	pc, err := c.poolConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := actorpool.Config{
		Name: "pgpool", MaxObjects: 9, MinObjects: 2, MinIdle: 1,
		MaxLifetime: 70 * time.Minute, LifetimeJitter: 10 * time.Minute, MaxIdleTime: 30 * time.Minute,
		TestTimeout: 2 * time.Second, ValidationInterval: time.Minute, CreateTimeout: 6 * time.Second,
		LeakThreshold: time.Minute,
	}
	if pc != want {
		t.Errorf("poolConfig =\n%+v, want\n%+v", pc, want)
	}

	c.ConnConfig.ConnectTimeout = 0
	c.MaxConns = math.MaxInt32
	if pc, err = c.poolConfig(); err != nil || pc.CreateTimeout != 4*time.Minute || pc.MaxObjects != MaxConnsCeiling {
		t.Errorf("without connect_timeout, MaxConns the largest int32: CreateTimeout %v, MaxObjects %d, %v; want 4m, %d",
			pc.CreateTimeout, pc.MaxObjects, err, MaxConnsCeiling)
	}
}

func TestNewWithConfigErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := NewWithConfig(ctx, &Config{}); !errors.Is(err, errNotParsed) {
		t.Errorf("NewWithConfig of a Config not made by ParseConfig: %v", err)
	}
	tests := []struct {
		name string
		set  func(c *Config)
		want string
	}{
		{"min idle above max", func(c *Config) { c.MinIdleConns = c.MaxConns + 1 }, "Config.MinIdleConns is"},
		{"negative min conns", func(c *Config) { c.MinConns = -1 }, "Config.MinConns is -1: must not be negative"},
		{"zero max conns", func(c *Config) { c.MaxConns = 0 }, "Config.MaxConns is 0: must be at least 1"},
		{"negative period", func(c *Config) { c.HealthCheckPeriod = -time.Second }, "Config.HealthCheckPeriod is -1s"},
		{"size set twice", func(c *Config) { c.Pool.MaxObjects = 3 }, "Config.Pool.MaxObjects is \"set\": must be zero: set Config.MaxConns instead"},
		{"an extra broken", func(c *Config) { c.Pool.MaxQueueSize = -1 }, "MaxQueueSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig("postgres://u@127.0.0.1:1/db")
			if err != nil {
				t.Fatal(err)
			}
			tt.set(c)
			if _, err := NewWithConfig(ctx, c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewWithConfig: %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := New(ctx, "postgres://u@127.0.0.1:1/db?pool_max_conns=many"); err == nil || !strings.Contains(err.Error(), "pool_max_conns") {
		t.Errorf("New with a bad pool_max_conns: %v", err)
	}
}

// Config returns the Config as given, not as the pool normalised it, and a
// copy that changes nothing in the pool; Copy and ConnString are
// pgxpool's.
func TestConfigCopy(t *testing.T) {
	const dsn = "postgres://u:secret@127.0.0.1:1/db?application_name=a&pool_max_conns=50000"
	c, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewWithConfig(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := p.Config()
	if got.MaxConns != 50000 || got.ConnString() != dsn {
		t.Errorf("Config: MaxConns %d, ConnString %q; want 50000 and the string parsed", got.MaxConns, got.ConnString())
	}
	got.ConnConfig.RuntimeParams["application_name"] = "changed"
	got.MaxConns = 1
	if again := p.Config(); again.ConnConfig.RuntimeParams["application_name"] != "a" || again.MaxConns != 50000 {
		t.Error("changing the Config that Config returned changed the pool's")
	}
	if s := p.Stat(); s.MaxConns() != MaxConnsCeiling {
		t.Errorf("Stat.MaxConns = %d, want %d", s.MaxConns(), MaxConnsCeiling)
	}
}

// TestCreateTimeoutCoversEveryHost checks the bound a Config without
// Pool.CreateTimeout puts on a connect: connect_timeout for each host,
// which pgx gives each host it tries, and once more.
func TestCreateTimeoutCoversEveryHost(t *testing.T) {
	tests := []struct {
		conn string
		want time.Duration
	}{
		{"postgres://u@127.0.0.1:5432/db?connect_timeout=3", 6 * time.Second}, // sslmode=prefer: one host, tried twice
		{"postgres://u@127.0.0.1:5432/db?connect_timeout=3&sslmode=disable", 6 * time.Second},
		{"postgres://u@10.0.0.1:5432,10.0.0.2:5432/db?connect_timeout=3", 9 * time.Second},
		{"postgres://u@10.0.0.1:5432,10.0.0.2:5432,10.0.0.3:5433/db?connect_timeout=2&sslmode=disable", 8 * time.Second},
		{"host=10.0.0.1,10.0.0.2 user=u", 6 * time.Minute},
	}
	for _, tt := range tests {
		c, err := ParseConfig(tt.conn)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := c.poolConfig()
		if err != nil {
			t.Fatal(err)
		}
		if pc.CreateTimeout != tt.want {
			t.Errorf("%s: CreateTimeout %v, want %v", tt.conn, pc.CreateTimeout, tt.want)
		}
	}
}
