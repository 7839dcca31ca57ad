package pgpool

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// FuzzParseConfig parses connection strings of any content. A string that
// parses gives a Config whose pool parameters are in range and none of
// which is left to be sent to the server; one that does not gives a
// *pgconn.ParseConfigError, as pgxpool's, that says why and does not show
// the password.
func FuzzParseConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, connString string) {
		c, err := ParseConfig(connString)
		if err != nil {
			var pe *pgconn.ParseConfigError
			if c != nil || !errors.As(err, &pe) || err.Error() == "" {
				t.Fatalf("ParseConfig = %v, %v (%T); want nil and a *pgconn.ParseConfigError", c, err, err)
			}
			if u, uerr := url.Parse(connString); uerr == nil && u.User != nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
				if pw, ok := u.User.Password(); ok && pw != "" && strings.Trim(pw, "x") != "" && strings.Contains(err.Error(), ":"+pw+"@") {
					t.Errorf("the error shows the password %q: %v", pw, err)
				}
			}
			return
		}
		if c.MaxConns < 1 || c.MinConns < 0 || c.MinIdleConns < 0 || c.Pool.MaxQueueSize < 0 {
			t.Errorf("pool parameters out of range: %+v", c)
		}
		for name := range c.ConnConfig.RuntimeParams {
			if strings.HasPrefix(name, "pool_") {
				t.Errorf("%s left in the session parameters sent to the server", name)
			}
		}
		// What NewWithConfig checks is refused with an error that names
		// the field, or the Config runs a pool.
		if _, err := c.poolConfig(); err != nil && !strings.Contains(err.Error(), "Config.") {
			t.Errorf("poolConfig: %v names no field", err)
		}
	})
}
