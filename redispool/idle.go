package redispool

import (
	"errors"
	"fmt"
	"io"

	"github.com/actorpool/actorpool/internal/sockpeek"
)

var (
	errUnexpectedData = errors.New("redispool: the server sent data to an idle connection, which it answers only when asked")
	errTLSAlert       = errors.New("redispool: the server sent a TLS alert to an idle connection: it ended the session")
)

// The first byte of a TLS record is its type. A Redis reply never starts
// with one of these, so what waits on an idle socket tells a plain
// connection's unasked reply from a TLS record.
const (
	tlsChangeCipherSpec = 0x14
	tlsAlert            = 0x15
	tlsHandshake        = 0x16
	tlsApplicationData  = 0x17
)

// checkIdle looks at the socket of a connection idle since the clock last
// ticked, without a round trip and without waiting, for a session the
// server has ended (CLIENT KILL, a restart, its idle timeout): it closes
// the connection, which shows as the end of the stream. One system call,
// at most once per connection and tick, so a busy connection costs an
// atomic load per take and give-back; a connection taken again within a
// tick is not looked at. Validate calls it last: a connection with
// replies unread, or subscribed, is refused before.
func (f *factory) checkIdle(c *conn) error {
	now := f.clock.Now()
	if c.seen.Load() == now {
		return nil
	}
	c.seen.Store(now)
	return peek(c)
}

// peek reports a connection whose peer closed it, or sent it something
// unasked. A connection with no replies owed and no subscription gets
// nothing from the server: a reply waiting there would go to the next
// caller's command. Under TLS, an alert (close_notify, or a fatal one)
// ends the session; another record may be a message of the TLS layer
// itself — a TLS 1.3 session ticket, sent after the handshake, waits
// there until the first command — and is left for it to read, unless the
// stream ends behind it.
func peek(c *conn) error {
	first, waiting, err := sockpeek.Peek(c.nc)
	switch {
	case err != nil:
		return fmt.Errorf("redispool: idle connection: %w", err)
	case !waiting:
		return nil
	case first == tlsAlert:
		return errTLSAlert
	case first == tlsChangeCipherSpec, first == tlsHandshake, first == tlsApplicationData:
		// TLS 1.3 sends an alert as application data, like a session
		// ticket: a session the server ended shows only by the end of
		// the stream behind the record.
		if sockpeek.Closed(c.nc) {
			return fmt.Errorf("redispool: idle connection: %w: %w", sockpeek.ErrPeerClosed, io.EOF)
		}
		return nil
	}
	return errUnexpectedData
}
