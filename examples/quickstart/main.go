// Command quickstart shows an actorpool pool of TCP connections at work: it
// starts an echo server on a free local port, pools connections to it, and
// has 32 clients share 4 connections for two seconds.
package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actorpool/actorpool"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go serve(ln)

	var dialer net.Dialer
	pool, err := actorpool.New(actorpool.FactoryFuncs[*conn]{
		CreateFunc: func(ctx context.Context) (*conn, error) {
			c, err := dialer.DialContext(ctx, "tcp", ln.Addr().String())
			if err != nil {
				return nil, err
			}
			return &conn{Conn: c, r: bufio.NewReader(c)}, nil
		},
		DestroyFunc: func(c *conn) { c.Close() },
	}, actorpool.Config{Name: "echo", MaxObjects: 4, MaxIdleTime: time.Minute})
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var ops atomic.Int64
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			for ctx.Err() == nil {
				msg := fmt.Sprintf("client %d", i)
				reply, err := actorpool.Do(ctx, pool, func(ctx context.Context, c *conn) (string, error) {
					return c.roundTrip(msg)
				})
				if err != nil {
					return
				}
				if reply != strings.ToUpper(msg) {
					log.Fatalf("got %q for %q", reply, msg)
				}
				ops.Add(1)
			}
		})
	}
	wg.Wait()
	s := pool.Stats()
	if err := pool.Close(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d round trips by 32 clients over %d connections (created %d, destroyed %d)\n",
		ops.Load(), s.MaxObjects, s.Created, pool.Stats().Destroyed)
	takes := s.Acquires + s.CanceledAcquires + s.TimedOutAcquires + s.ExhaustedAcquires
	fmt.Printf("takes: %d, of which %d waited %v in all\n", takes, s.Waits, s.WaitDuration.Round(time.Millisecond))
}

type conn struct {
	net.Conn
	r *bufio.Reader
}

func (c *conn) roundTrip(msg string) (string, error) {
	if _, err := fmt.Fprintln(c, msg); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

func serve(ln net.Listener) {
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
}
