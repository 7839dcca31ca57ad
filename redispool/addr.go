package redispool

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// isURL reports whether addr is a redis:// or rediss:// URL.
func isURL(addr string) bool {
	return strings.HasPrefix(addr, "redis://") || strings.HasPrefix(addr, "rediss://")
}

// checkAddr returns the rule that addr, on network, breaks, or "" if it
// is an address redigo can dial: what redigo would only find wrong when a
// connection is first made, and what it would silently ignore, fails here,
// when the pool is made.
func checkAddr(network, addr string) string {
	switch {
	case addr == "":
		return `must be "host:port" or a redis:// URL`
	case isURL(addr):
		return checkURL(addr)
	case network == "unix":
		if strings.IndexByte(addr, 0) >= 0 {
			return "must be a socket's path, which holds no NUL byte"
		}
		return ""
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err) // without the address, which the error names already
		}
		return `must be "host:port" or a redis:// URL: ` + err.Error()
	}
	return checkPort(port)
}

// checkURL returns the rule that the redis:// or rediss:// URL addr
// breaks, or "".
func checkURL(addr string) string {
	u, err := url.Parse(addr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return "is not a URL: " + err.Error()
	}
	if port := u.Port(); port != "" {
		if rule := checkPort(port); rule != "" {
			return rule
		}
	}
	if u.Path != "" && u.Path != "/" {
		if _, err := strconv.Atoi(u.Path[1:]); err != nil || strings.Trim(u.Path[1:], "0123456789") != "" {
			return "the URL's path must be a database's number, such as /2"
		}
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "the URL must have no query or fragment, which redigo would ignore: write redis://user:password@host:port/database"
	}
	return ""
}

// checkPort returns the rule that a port breaks, or "": a number from 1
// to 65535, or a service's name, such as "redis".
func checkPort(port string) string {
	if port != "" && strings.Trim(port, "0123456789") == "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "the port must be between 1 and 65535"
		}
		return ""
	}
	if port == "" || strings.ContainsFunc(port, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-')
	}) {
		return "the port must be a number from 1 to 65535, or a service's name such as redis"
	}
	return ""
}

// redact returns addr without the password it may carry: whatever comes
// before its last '@', but a scheme, is left out. An address on network
// "unix" that is not a URL is a socket's path, which it returns whole.
func redact(network, addr string) string {
	j := strings.LastIndex(addr, "@")
	if j < 0 || (network == "unix" && !isURL(addr)) {
		return addr
	}
	scheme := ""
	if i := strings.Index(addr, "//"); i >= 0 && i < j {
		scheme = addr[:i+2]
	}
	return scheme + "…" + addr[j:]
}
