package adapter

import (
	"errors"
	"net"
	"strconv"
	"strings"
)

// CheckHostPort returns the rule that addr, a "host:port" for net.Dial,
// breaks, or "": it must split into a host and a port, and the port be a
// number from 1 to 65535 or a service's name. The rule says the address
// must be what, such as `"host:port"`; it does not repeat addr, which the
// caller's error names.
func CheckHostPort(addr, what string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err) // without the address
		}
		return "must be " + what + ": " + err.Error()
	}
	return CheckPort(port)
}

// CheckPort returns the rule that port breaks, or "": a number from 1 to
// 65535, or a service's name, such as "redis".
func CheckPort(port string) string {
	if port != "" && strings.Trim(port, "0123456789") == "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "the port must be between 1 and 65535"
		}
		return ""
	}
	if port == "" || strings.ContainsFunc(port, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-')
	}) {
		return "the port must be a number from 1 to 65535, or a service's name such as https"
	}
	return ""
}

// CheckPath returns the rule that a Unix socket's path breaks, or "".
func CheckPath(path string) string {
	if strings.IndexByte(path, 0) >= 0 {
		return "must be a socket's path, which holds no NUL byte"
	}
	return ""
}
