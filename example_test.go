package actorpool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"strings"
	"time"

	"github.com/actorpool/actorpool"
)

// echoServer listens on a free local port and echoes each line it reads in
// upper case, until the listener is closed.
func echoServer() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					fmt.Fprint(c, strings.ToUpper(line))
				}
			}()
		}
	}()
	return ln
}

// A pool of TCP connections: dialed on demand, closed when destroyed.
func Example() {
	ln := echoServer()
	defer ln.Close()

	var dialer net.Dialer
	pool, err := actorpool.New(actorpool.FactoryFuncs[net.Conn]{
		CreateFunc: func(ctx context.Context) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", ln.Addr().String())
		},
		DestroyFunc: func(c net.Conn) { c.Close() },
	}, actorpool.Config{MaxObjects: 4, CreateTimeout: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())

	ctx := context.Background()
	lease, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	conn := lease.Value()
	fmt.Fprintln(conn, "hello")
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		lease.Destroy() // a connection that failed mid-exchange is not reused
		log.Fatal(err)
	}
	lease.Release()
	fmt.Print(reply)
	// Output: HELLO
}

// With takes a connection, runs the callback, and gives the connection
// back, even if the callback panics. Do does the same for a callback that
// returns a value.
func ExamplePool_With() {
	ln := echoServer()
	defer ln.Close()

	var dialer net.Dialer
	pool, err := actorpool.New(actorpool.FactoryFuncs[net.Conn]{
		CreateFunc: func(ctx context.Context) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", ln.Addr().String())
		},
		DestroyFunc: func(c net.Conn) { c.Close() },
	}, actorpool.Config{MaxObjects: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())

	shout := func(ctx context.Context, word string) (string, error) {
		return actorpool.Do(ctx, pool, func(ctx context.Context, c net.Conn) (string, error) {
			fmt.Fprintln(c, word)
			return bufio.NewReader(c).ReadString('\n')
		})
	}
	// The nested call reuses the connection that the outer With holds:
	// with a pool of one, it would otherwise wait forever.
	err = pool.With(context.Background(), func(ctx context.Context, c net.Conn) error {
		reply, err := shout(ctx, "nested")
		fmt.Print(reply)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: NESTED
}

// A take that cannot be served in time says how long it waited and how busy
// the pool was.
func ExampleWaitError() {
	pool, err := actorpool.New(actorpool.FactoryFuncs[int]{
		CreateFunc: func(context.Context) (int, error) { return 42, nil },
	}, actorpool.Config{MaxObjects: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())

	held, _ := pool.Acquire(context.Background())
	defer held.Release()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = pool.Acquire(ctx)
	var we *actorpool.WaitError
	if errors.As(err, &we) && errors.Is(err, actorpool.ErrTimeout) {
		fmt.Printf("%d/%d available, %d in use\n", we.Idle, we.Max, we.InUse)
	}
	// Output: 0/1 available, 1 in use
}

// Stats shows the pool's gauges and counters without blocking any take.
func ExamplePool_Stats() {
	pool, err := actorpool.New(actorpool.FactoryFuncs[int]{
		CreateFunc: func(context.Context) (int, error) { return 1, nil },
	}, actorpool.Config{MaxObjects: 2})
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		l, _ := pool.Acquire(context.Background())
		l.Release()
	}
	pool.Close(context.Background())
	s := pool.Stats()
	fmt.Printf("acquires %d, created %d, destroyed %d on close\n", s.Acquires, s.Created, s.DestroyedBy.Closed)
	// Output: acquires 3, created 1, destroyed 1 on close
}
