package netpool

import (
	"fmt"

	"github.com/actorpool/actorpool/internal/sockpeek"
)

// peek reports whether the peer has closed an idle connection or sent it
// something unasked, by looking at the socket's receive queue without
// taking anything from it and without waiting. A connection that cannot be
// looked at this way (TLS, a custom net.Conn) is reported healthy.
func peek(c *conn) error {
	_, waiting, err := sockpeek.Peek(c.Conn)
	switch {
	case err != nil:
		return fmt.Errorf("netpool: %w", err)
	case waiting:
		return errUnexpectedData
	}
	return nil
}
