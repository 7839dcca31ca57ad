package redispool

import (
	"strings"
	"testing"
)

// TestAddr checks the addresses a pool accepts, and that a bad one is
// refused when the pool is made, with an error that says what is wrong and
// never shows a password.
func TestAddr(t *testing.T) {
	tests := []struct {
		network, addr string
		want          string // in the error; "" for none
	}{
		{"", "127.0.0.1:6379", ""},
		{"tcp6", "[::1]:6379", ""},
		{"", "localhost:redis", ""},
		{"unix", "/run/redis.sock", ""},
		{"", "redis://:s3cret@cache.internal:6380/2", ""},
		{"", "rediss://app:s3cret@cache.internal", ""},
		{"", "redis://", ""},
		{"", "", `Config.Addr is empty: must be "host:port" or a redis:// URL`},
		{"", "cache.internal", `Config.Addr is "cache.internal": must be "host:port" or a redis:// URL: missing port in address`},
		{"", "cache:0", "the port must be between 1 and 65535"},
		{"", "cache:99999999999999999999", "the port must be between 1 and 65535"},
		{"", "cache:6379/0", "the port must be a number from 1 to 65535, or a service's name"},
		{"", "Redis://cache:6379", `must be "host:port" or a redis:// URL: too many colons`},
		{"unix", "/run/\x00.sock", "holds no NUL byte"},
		{"", "redis://:s3cret@cache.internal:70000/0", `Config.Addr is "redis://…@cache.internal:70000/0": the port must be between 1 and 65535`},
		{"", "redis://:s3cret@cache.internal/db2", "the URL's path must be a database's number, such as /2"},
		{"", "redis://:s3cret@cache.internal/+2", "the URL's path must be a database's number"},
		{"", "redis://:s3cret@cache.internal/0?dial_timeout=1s", "the URL must have no query or fragment"},
		{"", "redis://:s3cret@[::1/0", "is not a URL: missing ']' in host"},
	}
	for _, tt := range tests {
		_, err := Config{Network: tt.network, Addr: tt.addr}.withDefaults()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %q: %v", tt.network, tt.addr, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %q: %v; want an error with %q", tt.network, tt.addr, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%s %q: the error shows the password: %v", tt.network, tt.addr, err)
		}
	}
}
