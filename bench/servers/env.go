package servers

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"
)

// A Server is a kind of server the adapters are compared on.
type Server uint8

const (
	// Postgres is PostgreSQL.
	Postgres Server = iota
	// Redis is Redis.
	Redis
)

// Servers lists every server, in the order the benchmarks run them.
var Servers = []Server{Postgres, Redis}

// The environment variables that name the servers, and the addresses used
// when they are unset: the same variables and values as .ci/run and the
// root module's integration tests.
const (
	PostgresVar     = "ACTORPOOL_POSTGRES"
	RedisVar        = "ACTORPOOL_REDIS"
	PostgresDefault = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	RedisDefault    = "127.0.0.1:6379"
)

// reachTimeout bounds the TCP connect that checks a server is up.
const reachTimeout = 2 * time.Second

// String returns the server's name as it is written in prose:
// "PostgreSQL" or "Redis".
func (s Server) String() string {
	switch s {
	case Postgres:
		return "PostgreSQL"
	case Redis:
		return "Redis"
	}
	return fmt.Sprintf("Server(%d)", uint8(s))
}

// BenchName returns the name of the server's benchmark without its
// Benchmark prefix: "Postgres" or "Redis".
func (s Server) BenchName() string {
	if s == Postgres {
		return "Postgres"
	}
	return "Redis"
}

// Var returns the environment variable that names the server.
func (s Server) Var() string {
	if s == Postgres {
		return PostgresVar
	}
	return RedisVar
}

// Default returns the address used when the server's variable is unset.
func (s Server) Default() string {
	if s == Postgres {
		return PostgresDefault
	}
	return RedisDefault
}

// Addr returns the server's address: its environment variable's value, or
// the default when the variable is unset or empty.
func (s Server) Addr() string {
	if a := os.Getenv(s.Var()); a != "" {
		return a
	}
	return s.Default()
}

// hostPort returns the host:port to dial for addr: the host and port of a
// PostgreSQL URL (5432 when it has none), a Redis address as it is.
func (s Server) hostPort(addr string) (string, error) {
	if s == Redis {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", fmt.Errorf("%s=%q: want host:port such as %s: %v", s.Var(), addr, s.Default(), err)
		}
		return addr, nil
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s=%q: want a URL such as %s", s.Var(), addr, s.Default())
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "5432"), nil
	}
	return u.Host, nil
}

// Reach returns nil if the server at addr accepts TCP connections, and
// otherwise an error that says how to make it reachable.
func (s Server) Reach(addr string) error {
	hp, err := s.hostPort(addr)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", hp, reachTimeout)
	if err != nil {
		from := "the default, " + s.Var() + " being unset"
		if os.Getenv(s.Var()) != "" {
			from = "from " + s.Var()
		}
		return fmt.Errorf("no %s server at %s (%s): %v; start one there, or set %s to one's address, such as %s",
			s, hp, from, err, s.Var(), s.Default())
	}
	c.Close()
	return nil
}

// Need returns the address of server s, ready for the benchmarks: it
// skips tb when the server cannot be reached, with a message saying how to
// run it, or fails tb instead when the environment variable CI is set, so
// that a CI run meant to measure against the server cannot pass by
// skipping. It fails tb when the server is reachable but Prepare fails.
func Need(tb testing.TB, s Server) string {
	tb.Helper()
	addr := s.Addr()
	if err := s.Reach(addr); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%v (failing, not skipping: CI is set)", err)
		}
		tb.Skip(err)
	}
	if err := Prepare(s, addr); err != nil {
		tb.Fatal(err)
	}
	return addr
}

var (
	preparedMu sync.Mutex
	prepared   = map[string]func() error{}
)

// Prepare creates the data the operations read on the server at addr —
// the table actorpool_bench_kv in PostgreSQL, the keys actorpool:bench:* in
// Redis — once per process and address; later calls return the first
// one's error.
func Prepare(s Server, addr string) error {
	key := s.String() + " " + addr
	preparedMu.Lock()
	once, ok := prepared[key]
	if !ok {
		once = sync.OnceValue(func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if s == Postgres {
				return preparePostgres(ctx, addr)
			}
			return prepareRedis(ctx, addr)
		})
		prepared[key] = once
	}
	preparedMu.Unlock()
	return once()
}
