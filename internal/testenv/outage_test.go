package testenv

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestDialLog checks what MeasureOutage counts: every dial is an attempt,
// refused or not, but a PostgreSQL CancelRequest; a connection is open and
// answered from the server's first bytes until it is closed or the server
// ends it.
func TestDialLog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 8)
				if _, err := io.ReadFull(c, b); err != nil {
					return
				}
				switch b[0] {
				case 'q': // answer and stay
					c.Write([]byte("answer"))
					io.Copy(io.Discard, c)
				case 'b': // answer and end it
					c.Write([]byte("bye"))
				}
			}()
		}
	}()
	var d dialLog
	ctx := context.Background()
	dial := func() net.Conn {
		t.Helper()
		c, err := d.dial(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	start := time.Now()

	a := dial()
	a.Write([]byte("question"))
	a.Read(make([]byte, 16))
	if n := d.answered(); n != 1 {
		t.Errorf("%d connections answered, want 1", n)
	}
	b := dial()
	b.Write([]byte("question"))
	b.Read(make([]byte, 16))
	if n := d.answered(); n != 2 {
		t.Errorf("%d connections answered, want 2", n)
	}
	a.Close()
	a.Close()
	if n := d.answered(); n != 1 {
		t.Errorf("%d connections answered after one was closed twice, want 1", n)
	}
	ended := dial()
	ended.Write([]byte("bye....."))
	ended.Read(make([]byte, 16))
	if _, err := ended.Read(make([]byte, 16)); err != io.EOF {
		t.Fatalf("read after the server's goodbye: %v, want EOF", err)
	}
	if n := d.answered(); n != 1 {
		t.Errorf("%d connections answered after the server ended one, want 1", n)
	}
	ended.Close()
	cancel := dial()
	cancel.Write([]byte{0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 0, 0, 0, 1, 0, 0, 0, 2})
	cancel.Read(make([]byte, 1)) // the server ends it
	cancel.Close()
	if _, err := d.dial(ctx, "tcp", FreeAddr(t)); err == nil {
		t.Fatal("a dial to a free port succeeded")
	}
	b.Close()

	var r OutageReport
	now := time.Now()
	d.report(&r, Outage{Size: 2}, start, now, now)
	if r.Attempts != 4 {
		t.Errorf("%d attempts counted, want 4: three connections and a refused dial, not the CancelRequest", r.Attempts)
	}
	if r.Full != 0 || r.Dialed != 0 {
		t.Errorf("Full = %v, Dialed = %v, want 0 and 0: two connections were dialed, open and answered", r.Full, r.Dialed)
	}
	if n := d.answered(); n != 0 {
		t.Errorf("%d connections answered after all were closed, want 0", n)
	}
}
