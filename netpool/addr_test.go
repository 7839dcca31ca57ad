package netpool

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestAddr checks the addresses a pool accepts: without a Dial, what
// net.Dial takes; with one, anything but nothing.
func TestAddr(t *testing.T) {
	dial := func(context.Context, string, string) (net.Conn, error) { return nil, nil }
	tests := []struct {
		network, addr string
		dial          bool
		want          string // in the error; "" for none
	}{
		{"", "127.0.0.1:11211", false, ""},
		{"tcp6", "[::1]:1", false, ""},
		{"", "db:postgresql", false, ""},
		{"udp", "127.0.0.1:53", false, ""},
		{"unix", "/run/svc.sock", false, ""},
		{"unixpacket", "@abstract", false, ""},
		{"", "cache", false, `Config.Addr is "cache": must be "host:port": missing port in address`},
		{"", "cache:0", false, `Config.Addr is "cache:0": the port must be between 1 and 65535`},
		{"", "cache:ht tp", false, "the port must be a number from 1 to 65535, or a service's name"},
		{"unix", "/run/\x00", false, "holds no NUL byte"},
		{"quic", "h:1", false, `Config.Network is "quic": must be a network of net.Dial`},
		{"quic", "anything at all", true, ""},
		{"", "", true, "Config.Addr is empty"},
	}
	for _, tt := range tests {
		c := Config{Network: tt.network, Addr: tt.addr}
		if tt.dial {
			c.Dial = dial
		}
		_, err := c.withDefaults()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s %q (Dial %v): %v; want %q", tt.network, tt.addr, tt.dial, err, tt.want)
		}
	}
}
