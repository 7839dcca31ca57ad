//go:build linux

package sockpeek

import (
	"net"
	"testing"
	"time"
)

// TestClosed checks that Closed sees the end of the stream behind data
// that waits to be read, and only the end.
func TestClosed(t *testing.T) {
	tests := []struct {
		name string
		peer func(c net.Conn)
		want bool
	}{
		{"quiet", func(net.Conn) {}, false},
		{"peer wrote", func(c net.Conn) { c.Write([]byte("x")) }, false},
		{"peer wrote and closed", func(c net.Conn) { c.Write([]byte("bye")); c.Close() }, true},
		{"peer closed", func(c net.Conn) { c.Close() }, true},
		{"peer shut down writing", func(c net.Conn) { c.(*net.TCPConn).CloseWrite() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := pair(t)
			tt.peer(server)
			// What the peer did reaches the client's socket after a
			// moment: wait for the end, or give a quiet peer that moment.
			deadline := time.Now().Add(5 * time.Second)
			if !tt.want {
				deadline = time.Now().Add(20 * time.Millisecond)
			}
			got := Closed(client)
			for !got && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
				got = Closed(client)
			}
			if got != tt.want {
				t.Errorf("Closed = %v, want %v", got, tt.want)
			}
		})
	}
	a, b := net.Pipe()
	defer a.Close()
	b.Close()
	if Closed(a) {
		t.Error("Closed on a net.Pipe: true, want false (no socket)")
	}
}
