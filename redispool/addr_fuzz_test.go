package redispool

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// errDialed stands for a dial that redigo got to: the address parsed.
var errDialed = errors.New("dialed")

// FuzzAddr makes pools of any address. An address refused is refused with
// an error that names Config.Addr or Config.Network and does not show a
// URL's password; an address accepted is one that redigo gets to dial,
// rather than one it refuses at the first connect.
func FuzzAddr(f *testing.F) {
	f.Fuzz(func(t *testing.T, network, addr string) {
		_, err := Config{Network: network, Addr: addr}.withDefaults()
		var password string // a socket's path has none
		if u, uerr := url.Parse(addr); uerr == nil && u.User != nil && (network != "unix" || isURL(addr)) {
			password, _ = u.User.Password()
		}
		leaks := func(s string) bool { return password != "" && strings.Contains(s, ":"+password+"@") }
		if r := redact(network, addr); leaks(r) {
			t.Errorf("redact(%q, %q) = %q shows the password", network, addr, r)
		}
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "Config.Addr") && !strings.Contains(msg, "Config.Network") || leaks(msg) {
				t.Errorf("error %q", msg)
			}
			return
		}
		if !isURL(addr) {
			if network != "unix" {
				if _, _, err := net.SplitHostPort(addr); err != nil {
					t.Errorf("%q accepted, but it is no host:port: %v", addr, err)
				}
			}
			return
		}
		dial := redis.DialContextFunc(func(context.Context, string, string) (net.Conn, error) { return nil, errDialed })
		if _, err := redis.DialURLContext(context.Background(), addr, dial); !errors.Is(err, errDialed) {
			t.Errorf("%q accepted, but redigo refuses it: %v", addr, err)
		}
	})
}
