package adapter

import (
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
)

// closeCounter is a socket that counts its Closes.
type closeCounter struct {
	net.Conn
	closes atomic.Int32
}

func (c *closeCounter) Close() error { c.closes.Add(1); return nil }

// TestTestGuard drives a TestGuard through each order in which the pool
// may call Test and Destroy, and checks who closes what: the connection
// is closed exactly once, by Destroy unless a Test is running, and then by
// Test's goroutine, after Destroy has closed only the socket.
func TestTestGuard(t *testing.T) {
	errPing := errors.New("ping failed")
	tests := []struct {
		name string
		// run calls Test and Destroy on g in some order; destroy calls
		// Destroy, test runs a Test whose body is body.
		run func(destroy func(), test func(body func() error) error) error

		wantErr          error
		wantSocketCloses int32 // by Destroy, during a Test
		wantConnCloses   int32
		wantPanic        bool
	}{
		{
			name: "Destroy on an idle connection",
			run: func(destroy func(), test func(func() error) error) error {
				if err := test(func() error { return nil }); err != nil {
					return err
				}
				destroy()
				return nil
			},
			wantConnCloses: 1,
		},
		{
			name: "Destroy while Test runs",
			run: func(destroy func(), test func(func() error) error) error {
				return test(func() error {
					destroy()
					return errPing // the socket closed under it
				})
			},
			wantErr: errPing, wantSocketCloses: 1, wantConnCloses: 1,
		},
		{
			name: "Destroy before Test begins",
			run: func(destroy func(), test func(func() error) error) error {
				destroy()
				return test(func() error { panic("Test ran on a destroyed connection") })
			},
			wantErr: ErrDestroyed, wantConnCloses: 1,
		},
		{
			name: "Test fails, then Destroy",
			run: func(destroy func(), test func(func() error) error) error {
				err := test(func() error { return errPing })
				destroy()
				return err
			},
			wantErr: errPing, wantConnCloses: 1,
		},
		{
			name: "Test panics, then Destroy",
			run: func(destroy func(), test func(func() error) error) (err error) {
				defer destroy()
				return test(func() error { panic("boom") })
			},
			wantPanic: true, wantConnCloses: 1,
		},
		{
			name: "Destroy while Test runs, then Test panics",
			run: func(destroy func(), test func(func() error) error) error {
				return test(func() error {
					destroy()
					panic("boom")
				})
			},
			wantPanic: true, wantSocketCloses: 1, wantConnCloses: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				g      TestGuard
				socket closeCounter
				closes atomic.Int32
			)
			closeConn := func() { closes.Add(1) }
			destroy := func() { g.Destroy(&socket, closeConn) }
			test := func(body func() error) error { return g.Test(body, closeConn) }
			var err error
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				err = tt.run(destroy, test)
				return false
			}()
			if panicked != tt.wantPanic {
				t.Errorf("panicked: %v, want %v", panicked, tt.wantPanic)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Test returned %v, want %v", err, tt.wantErr)
			}
			if n := socket.closes.Load(); n != tt.wantSocketCloses {
				t.Errorf("socket closed %d times, want %d", n, tt.wantSocketCloses)
			}
			if n := closes.Load(); n != tt.wantConnCloses {
				t.Errorf("connection closed %d times, want %d", n, tt.wantConnCloses)
			}
		})
	}
}

// wrapper wraps a connection and says so, as tls.Conn does.
type wrapper struct{ net.Conn }

func (w wrapper) NetConn() net.Conn { return w.Conn }

// selfWrapper says it wraps itself.
type selfWrapper struct{ net.Conn }

func (w *selfWrapper) NetConn() net.Conn { return w }

func TestSocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	self := &selfWrapper{a}
	tests := []struct {
		name string
		c    net.Conn
		want net.Conn
	}{
		{"a socket", a, a},
		{"TLS", tls.Client(a, &tls.Config{}), a},
		{"TLS over a wrapper", tls.Client(wrapper{a}, &tls.Config{}), a},
		{"a wrapper of nothing", wrapper{nil}, wrapper{nil}},
		{"a wrapper of itself", self, self},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Socket(tt.c); got != tt.want {
				t.Errorf("Socket = %v, want %v", got, tt.want)
			}
		})
	}
}
