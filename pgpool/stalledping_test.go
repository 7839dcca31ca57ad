package pgpool

import (
	"context"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestAcquireCanceledDuringStalledPing is pgxpool's test of the same name,
// which sync.sh leaves out of the compat suite for its use of pgx's
// internal pgmock: a take whose ShouldPing ping gets no answer gives up
// when its context ends, and the ping goes on holding the connection
// until PingTimeout, or else a minute, then closes it.
func TestAcquireCanceledDuringStalledPing(t *testing.T) {
	for _, pingTimeout := range []time.Duration{0, 10 * time.Second} {
		t.Run(pingTimeout.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client, server := net.Pipe()
				defer client.Close()
				defer server.Close()
				pingStarted := make(chan struct{})
				serverDone := make(chan error, 1)
				go func() {
					defer server.Close()
					defer close(pingStarted)
					b := pgproto3.NewBackend(server, server)
					if _, err := b.ReceiveStartupMessage(); err != nil {
						serverDone <- err
						return
					}
					b.Send(&pgproto3.AuthenticationOk{})
					b.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 0}})
					b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
					if err := b.Flush(); err != nil {
						serverDone <- err
						return
					}
					m, err := b.Receive()
					if err != nil {
						serverDone <- err
						return
					}
					if _, ok := m.(*pgproto3.Query); !ok {
						serverDone <- errors.New("want a Query")
						return
					}
					pingStarted <- struct{}{}
					// Never answer the ping: only the connection's close ends this.
					for {
						if _, err := b.Receive(); err != nil {
							serverDone <- nil
							return
						}
					}
				}()
				cfg, err := ParseConfig("host=127.0.0.1 sslmode=disable")
				if err != nil {
					t.Fatal(err)
				}
				cfg.MaxConns = 1
				cfg.HealthCheckPeriod = time.Hour
				cfg.PingTimeout = pingTimeout
				cfg.ShouldPing = func(context.Context, ShouldPingParams) bool { return true }
				var dialed bool
				cfg.ConnConfig.DialFunc = func(context.Context, string, string) (net.Conn, error) {
					if dialed {
						return nil, errors.New("no additional connections")
					}
					dialed = true
					return client, nil
				}
				pool, err := newPool(context.Background(), cfg, 0)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				acquireDone := make(chan error, 1)
				go func() {
					c, err := pool.Acquire(ctx)
					if c != nil {
						c.Release()
					}
					acquireDone <- err
				}()
				<-pingStarted
				cancel()
				if err := <-acquireDone; !errors.Is(err, context.Canceled) {
					t.Fatalf("Acquire = %v, want context.Canceled", err)
				}
				synctest.Wait()
				if n := pool.Stat().AcquiredConns(); n != 1 {
					t.Fatalf("AcquiredConns after the take gave up = %d, want 1: the ping still holds it", n)
				}
				closeDone := make(chan struct{})
				go func() { pool.Close(); close(closeDone) }()
				timeout := time.Minute
				if pingTimeout > 0 {
					timeout = pingTimeout
				}
				time.Sleep(timeout - time.Second)
				synctest.Wait()
				if n := pool.Stat().AcquiredConns(); n != 1 {
					t.Fatalf("AcquiredConns a second before the ping's limit = %d, want 1", n)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if n := pool.Stat().TotalConns(); n != 0 {
					t.Errorf("TotalConns after the ping's limit = %d, want 0", n)
				}
				select {
				case <-closeDone:
				default:
					t.Fatal("Close is still waiting for the abandoned ping")
				}
				if err := <-serverDone; err != nil {
					t.Error(err)
				}
			})
		})
	}
}
