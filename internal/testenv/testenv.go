// Package testenv finds the real servers that the adapters' integration
// tests run against, starts private servers for the fault tests that stop,
// crash or freeze them, and stands in for servers with a proxy.
//
// The servers are named by environment variables: ACTORPOOL_POSTGRES, a
// PostgreSQL connection URL, and ACTORPOOL_REDIS, a Redis host:port. A test
// that needs one is skipped, with a message that says how to run it, when
// its variable is unset, and fails when the variable is set and the server
// cannot be reached: a CI run that was meant to test against a server must
// not pass by skipping.
//
// No test stops the shared servers: go test runs packages in parallel, and
// others use them at that moment. A test that stops, crashes or freezes a
// server asks for a private one with PrivatePostgres or PrivateRedis.
//
// FaultSuite is the fault tests that every adapter over a server runs, with
// what differs between adapters given as funcs. LockedBuffer and
// TaskErrors keep what the code a test runs writes or reports from other
// goroutines, for the test to read.
package testenv

import (
	"net"
	"net/url"
	"os"
	"testing"
	"time"
)

// The variables that name the servers, and the values .ci/run gives them.
const (
	PostgresVar     = "ACTORPOOL_POSTGRES"
	RedisVar        = "ACTORPOOL_REDIS"
	PostgresExample = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	RedisExample    = "127.0.0.1:6379"
)

// reachTimeout bounds the TCP connect that checks a server is up.
const reachTimeout = 5 * time.Second

// Postgres returns the connection URL in ACTORPOOL_POSTGRES. It skips t
// when the variable is unset and fails t when the server does not accept
// TCP connections.
func Postgres(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(PostgresVar)
	if dsn == "" {
		t.Skipf("integration test: set %s=%s (a PostgreSQL server) or run bash .ci/run", PostgresVar, PostgresExample)
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("%s=%q: want a URL such as %s", PostgresVar, dsn, PostgresExample)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	mustReach(t, PostgresVar, host)
	return dsn
}

// PostgresHostPort returns the host:port of the server that dsn, a URL,
// names.
func PostgresHostPort(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %q: %v", dsn, err)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "5432")
	}
	return u.Host
}

// Redis returns the host:port in ACTORPOOL_REDIS. It skips t when the
// variable is unset and fails t when the server does not accept TCP
// connections.
func Redis(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(RedisVar)
	if addr == "" {
		t.Skipf("integration test: set %s=%s (a Redis server) or run bash .ci/run", RedisVar, RedisExample)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("%s=%q: want host:port such as %s: %v", RedisVar, addr, RedisExample, err)
	}
	mustReach(t, RedisVar, addr)
	return addr
}

func mustReach(t testing.TB, name, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, reachTimeout)
	if err != nil {
		t.Fatalf("%s names %s, which cannot be reached: %v", name, addr, err)
	}
	c.Close()
}

// Reachable reports whether addr accepts TCP connections now.
func Reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
