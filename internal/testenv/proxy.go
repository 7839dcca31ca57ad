package testenv

import (
	"net"
	"sync"
	"testing"
)

// A Proxy forwards TCP connections from an address of its own to a real
// server, so that a test can make the server unreachable, drop every
// client at once, or have it stop answering, without touching the server
// that other tests share.
type Proxy struct {
	ln     net.Listener
	target string
	done   chan struct{} // closed by Close

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
	stalled chan struct{} // non-nil while stalled; Resume closes it
	wg      sync.WaitGroup
}

// FreeAddr returns a loopback address on which nothing listens now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// StartProxy listens on addr ("127.0.0.1:0" for any free port) and
// forwards every connection to target. The proxy is closed when t ends.
func StartProxy(t testing.TB, addr, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: target, done: make(chan struct{}), conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr returns the address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, drops every connection and waits for the proxy's
// goroutines to end.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	p.mu.Unlock()
	p.CutAll()
	p.wg.Wait()
}

// Stall stops forwarding, both ways, without closing anything: what either
// end sends from now on is read and held, as by a server that stopped
// answering (frozen, or cut off by a network that drops packets), until
// Resume. Connections still open and are accepted meanwhile. While
// stalled, a connection cut by CutAll is closed at both ends at once, but
// its goroutines wait for Resume or Close.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled == nil {
		p.stalled = make(chan struct{})
	}
}

// Resume forwards again what Stall held, and what follows.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled != nil {
		close(p.stalled)
		p.stalled = nil
	}
}

// flowing waits while the proxy is stalled, and reports false if it was
// closed meanwhile.
func (p *Proxy) flowing() bool {
	p.mu.Lock()
	stalled := p.stalled
	p.mu.Unlock()
	if stalled == nil {
		return true
	}
	select {
	case <-stalled:
		return true
	case <-p.done:
		return false
	}
}

// CutAll drops every connection through the proxy, as a server that
// closes its clients' connections would.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Conns returns how many connections, each way, the proxy holds open.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client, server) {
			continue
		}
		p.wg.Add(2)
		go p.pipe(client, server)
		go p.pipe(server, client)
	}
}

// track records a pair of connections, or closes them if the proxy is
// closing.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		a.Close()
		b.Close()
		return false
	}
	p.conns[a] = struct{}{}
	p.conns[b] = struct{}{}
	return true
}

// pipe copies from src to dst until either fails, then closes both, so
// that an end closed on one side is closed on the other. While the proxy
// is stalled, what it reads waits.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.flowing() {
				break
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}
