package netpool

import (
	"net"
	"strings"
	"testing"
)

// FuzzAddr makes pools of any network and address, without a Dial. What
// is refused is refused with an error that names the field at fault; what
// is accepted net.Dial can parse.
func FuzzAddr(f *testing.F) {
	f.Fuzz(func(t *testing.T, network, addr string) {
		c, err := Config{Network: network, Addr: addr}.withDefaults()
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "Config.Addr") && !strings.Contains(msg, "Config.Network") {
				t.Errorf("error %q names neither Addr nor Network", msg)
			}
			return
		}
		if strings.HasPrefix(c.Network, "unix") {
			if _, err := net.ResolveUnixAddr(c.Network, addr); err != nil {
				t.Errorf("%s %q accepted, but net refuses it: %v", c.Network, addr, err)
			}
			return
		}
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			t.Errorf("%s %q accepted, but it is no host:port: %v", c.Network, addr, err)
		}
	})
}
