package pgpool

import (
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
)

func TestParseConfig(t *testing.T) {
	const base = "postgres://u@127.0.0.1:5432/db?sslmode=disable"
	tests := []struct {
		name  string
		query string
		check func(t *testing.T, c *Config)
		want  string // substring of the error; empty for none
	}{
		{"defaults", "", func(t *testing.T, c *Config) {
			want := actorpool.Config{
				Name: "pgpool", MaxObjects: DefaultMaxConns(), MaxLifetime: DefaultMaxConnLifetime,
				MaxIdleTime: DefaultMaxConnIdleTime, ValidationInterval: DefaultHealthCheckPeriod,
			}
			if c.Pool != want {
				t.Errorf("Pool = %+v, want %+v", c.Pool, want)
			}
		}, ""},
		{"every pool parameter", "&pool_max_conns=7&pool_min_idle_conns=2&pool_max_queue_size=50" +
			"&pool_max_conn_lifetime=2h&pool_max_conn_idle_time=90s&pool_health_check_period=15s&pool_ping_timeout=2s&connect_timeout=3",
			func(t *testing.T, c *Config) {
				p := c.Pool
				if p.MaxObjects != 7 || p.MinIdle != 2 || p.MaxQueueSize != 50 || p.MaxLifetime != 2*time.Hour ||
					p.MaxIdleTime != 90*time.Second || p.ValidationInterval != 15*time.Second || p.TestTimeout != 2*time.Second ||
					p.CreateTimeout != 3*time.Second {
					t.Errorf("Pool = %+v", p)
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
		{"zero max conns", "&pool_max_conns=0", nil, `pool_max_conns="0": want an integer of at least 1`},
		{"bad duration", "&pool_max_conn_lifetime=soon", nil, `pool_max_conn_lifetime="soon": want a duration`},
		{"negative duration", "&pool_max_conn_idle_time=-1s", nil, "pool_max_conn_idle_time"},
		{"pgxpool's min conns", "&pool_min_conns=2", nil, "pool_min_conns is not supported: use pool_min_idle_conns"},
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
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestNewWithConfigErrors(t *testing.T) {
	if _, err := NewWithConfig(&Config{}); err == nil || !strings.Contains(err.Error(), "ConnConfig is nil") {
		t.Errorf("NewWithConfig without ConnConfig: %v", err)
	}
	c, err := ParseConfig("postgres://u@127.0.0.1:1/db")
	if err != nil {
		t.Fatal(err)
	}
	c.Pool.MinIdle = c.Pool.MaxObjects + 1
	if _, err := NewWithConfig(c); err == nil || !strings.Contains(err.Error(), "MinIdle") {
		t.Errorf("NewWithConfig with MinIdle > MaxObjects: %v, want an error naming MinIdle", err)
	}
	if _, err := New("postgres://u@127.0.0.1:1/db?pool_max_conns=many"); err == nil || !strings.Contains(err.Error(), "pool_max_conns") {
		t.Errorf("New with a bad pool_max_conns: %v", err)
	}
}
