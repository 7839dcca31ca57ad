package netpool

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
)

// A lineServer is a TCP server that answers each line with the line in
// upper case, except "hang", which it never answers, and "bye", on which
// it closes the connection. A test can make it
// hang up on its clients, write to them unasked, or stop and start again on
// the same address.
type lineServer struct {
	t    *testing.T
	addr string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startLineServer(t *testing.T, addr string) *lineServer {
	t.Helper()
	s := &lineServer{t: t, addr: addr, conns: make(map[net.Conn]struct{})}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start listens on the server's address, the one it had if it had one.
func (s *lineServer) start() {
	s.t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.ln = ln
	s.addr = ln.Addr().String()
	s.mu.Unlock()
	s.wg.Add(1)
	go s.serve(ln)
}

// stop closes the listener and every connection, and waits for the
// server's goroutines.
func (s *lineServer) stop() {
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
	s.mu.Unlock()
	s.hangUp()
	s.wg.Wait()
}

// hangUp closes every connection the server holds.
func (s *lineServer) hangUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// held returns how many connections the server holds.
func (s *lineServer) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// say writes msg to every connection, unasked.
func (s *lineServer) say(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Write([]byte(msg))
	}
}

func (s *lineServer) serve(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.handle(c)
	}
}

func (s *lineServer) handle(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		switch line {
		case "hang\n":
			continue
		case "bye\n":
			return
		}
		if _, err := c.Write([]byte(strings.ToUpper(line))); err != nil {
			return
		}
	}
}

// roundTrip writes line and reads the answer.
func roundTrip(c net.Conn, line string) (string, error) {
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	// One byte at a time, so that nothing past the line is consumed.
	var b strings.Builder
	var buf [1]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			return b.String(), err
		}
		if buf[0] == '\n' {
			return b.String(), nil
		}
		b.WriteByte(buf[0])
	}
}
