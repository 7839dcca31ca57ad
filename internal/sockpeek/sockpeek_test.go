package sockpeek

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// pair returns both ends of a TCP connection on the loopback interface.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// peekUntil peeks at c until it finds something or five seconds pass:
// what the peer does reaches c's socket after a moment.
func peekUntil(c net.Conn) (byte, bool, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		first, waiting, err := Peek(c)
		if waiting || err != nil || time.Now().After(deadline) {
			return first, waiting, err
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPeek(t *testing.T) {
	t.Run("quiet", func(t *testing.T) {
		client, _ := pair(t)
		if first, waiting, err := Peek(client); waiting || err != nil {
			t.Errorf("Peek = %q, %v, %v; want nothing waiting", first, waiting, err)
		}
	})
	t.Run("peer wrote", func(t *testing.T) {
		client, server := pair(t)
		server.Write([]byte("E-rest"))
		if first, waiting, err := peekUntil(client); !waiting || first != 'E' || err != nil {
			t.Fatalf("Peek = %q, %v, %v; want 'E' waiting", first, waiting, err)
		}
		// Peek took nothing.
		buf := make([]byte, 6)
		if _, err := io.ReadFull(client, buf); err != nil || string(buf) != "E-rest" {
			t.Errorf("read after Peek: %q, %v; want E-rest", buf, err)
		}
	})
	t.Run("peer wrote and closed", func(t *testing.T) {
		client, server := pair(t)
		server.Write([]byte("bye"))
		server.Close()
		// The bytes come first: the end of the stream is behind them.
		if first, waiting, err := peekUntil(client); !waiting || first != 'b' || err != nil {
			t.Errorf("Peek = %q, %v, %v; want 'b' waiting", first, waiting, err)
		}
	})
	t.Run("peer closed", func(t *testing.T) {
		client, server := pair(t)
		server.Close()
		_, waiting, err := peekUntil(client)
		if waiting || !errors.Is(err, ErrPeerClosed) || !errors.Is(err, io.EOF) {
			t.Errorf("Peek = %v, %v; want ErrPeerClosed and io.EOF", waiting, err)
		}
	})
	t.Run("closed here", func(t *testing.T) {
		client, _ := pair(t)
		client.Close()
		if _, _, err := Peek(client); err == nil {
			t.Error("Peek on a closed connection: nil error")
		}
	})
	t.Run("no socket", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		go b.Write([]byte("x"))
		if first, waiting, err := Peek(a); waiting || err != nil {
			t.Errorf("Peek on a net.Pipe = %q, %v, %v; want nothing waiting", first, waiting, err)
		}
	})
}

// TestPeekBesideRead checks that Peek answers at once while another
// goroutine is blocked reading the connection, as a pgx connection's
// background reader may be: Peek must not queue behind that Read.
func TestPeekBesideRead(t *testing.T) {
	client, server := pair(t)
	read := make(chan error, 1)
	go func() {
		_, err := client.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the Read block; Peek must not wait for it either way
	done := make(chan error, 1)
	go func() {
		_, _, err := Peek(client)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Peek beside a Read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Peek waited for a Read on another goroutine")
		defer func() { <-done }() // the write below ends the Read, then Peek
	}
	server.Write([]byte("x"))
	if err := <-read; err != nil {
		t.Fatal(err)
	}
}
