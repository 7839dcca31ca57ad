package netpool_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/netpool"
)

// upperServer answers each line it reads with the line in upper case.
func upperServer() net.Listener {
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

// ask sends a line and reads the answer. A reader made for one call may
// read ahead of the answer only because this protocol has one answer per
// line; a protocol with pushed data would keep the reader with the
// connection.
func ask(c net.Conn, line string) (string, error) {
	if _, err := fmt.Fprintln(c, line); err != nil {
		return "", err
	}
	answer, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(answer, "\n"), err
}

func Example() {
	ln := upperServer()
	defer ln.Close()

	pool, err := netpool.New(ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())

	c, err := pool.Acquire(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Release()
	answer, err := ask(c, "hello")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
	// Output: HELLO
}

func ExampleNewWithConfig() {
	ln := upperServer()
	defer ln.Close()

	pool, err := netpool.NewWithConfig(&netpool.Config{
		Addr: ln.Addr().String(),
		Ping: func(ctx context.Context, c *netpool.Conn) error {
			answer, err := ask(c, "ping")
			if err == nil && answer != "PING" {
				err = fmt.Errorf("ping answered %q", answer)
			}
			return err
		},
		Pool: actorpool.Config{
			MaxObjects:         4,
			CreateTimeout:      time.Second,      // the connect timeout
			ValidationInterval: 30 * time.Second, // check idle connections
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())

	err = pool.With(context.Background(), func(ctx context.Context, c *netpool.Conn) error {
		if dl, ok := ctx.Deadline(); ok {
			c.SetDeadline(dl) // cleared when the connection is given back
		}
		answer, err := ask(c, "hello")
		fmt.Println(answer)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: HELLO
}
