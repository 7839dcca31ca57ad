package redispool

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// A scriptedServer is a TCP server that reads RESP commands and answers
// each with what its reply function returns: a raw RESP reply, nil to
// never answer, as a hung server would, or hangUp to close the connection. It stands in for Redis where a
// test needs a server that misbehaves on cue.
type scriptedServer struct {
	ln    net.Listener
	reply func(cmd []string) []byte
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

// hangUp is the reply that makes a scriptedServer close the connection.
var hangUp = []byte{}

func startScripted(t *testing.T, reply func(cmd []string) []byte) *scriptedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptedServer{ln: ln, reply: reply}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *scriptedServer) addr() string { return s.ln.Addr().String() }

func (s *scriptedServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *scriptedServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.handle(c)
	}
}

func (s *scriptedServer) handle(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		cmd, err := readCommand(r)
		if err != nil {
			return
		}
		b := s.reply(cmd)
		switch {
		case b == nil:
		case len(b) == 0:
			return
		default:
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}
}

// readCommand reads one RESP array of bulk strings, as clients send.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readLen(r, '*')
	if err != nil {
		return nil, err
	}
	cmd := make([]string, n)
	for i := range cmd {
		size, err := readLen(r, '$')
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		cmd[i] = string(b[:size])
	}
	return cmd, nil
}

func readLen(r *bufio.Reader, prefix byte) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 || line[0] != prefix {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(line[1 : len(line)-2])
}
