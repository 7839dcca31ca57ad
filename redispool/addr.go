package redispool

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/actorpool/actorpool/internal/adapter"
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
		return adapter.CheckPath(addr)
	}
	return adapter.CheckHostPort(addr, `"host:port" or a redis:// URL`)
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
		if rule := adapter.CheckPort(port); rule != "" {
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
