package redispool_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/redispool"
	"github.com/gomodule/redigo/redis"
)

func Example() {
	ctx := context.Background()
	pool, err := redispool.NewWithConfig(&redispool.Config{
		Addr: os.Getenv("ACTORPOOL_REDIS"), // such as "127.0.0.1:6379"
		Pool: actorpool.Config{
			MaxObjects:         16,
			MaxIdleTime:        5 * time.Minute,
			ValidationInterval: 30 * time.Second, // PING idle connections
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(ctx)

	if _, err := pool.Do(ctx, "SET", "example:greeting", "hello", "EX", 60); err != nil {
		log.Fatal(err)
	}
	greeting, err := redis.String(pool.Do(ctx, "GET", "example:greeting"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(greeting)
	// Output: hello
}

// Several commands on one connection: a pipeline, then a transaction.
func ExamplePool_Acquire() {
	ctx := context.Background()
	pool, err := redispool.New(os.Getenv("ACTORPOOL_REDIS")) // such as "127.0.0.1:6379"
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(ctx)

	c, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Release()

	c.Send("DEL", "example:counter")
	c.Send("INCR", "example:counter")
	c.Send("INCRBY", "example:counter", 41)
	replies, err := redis.Values(c.Do(""))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(replies[1:]...)

	c.Send("MULTI")
	c.Send("INCR", "example:counter")
	c.Send("DEL", "example:counter")
	replies, err = redis.Values(c.Do("EXEC"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(replies...)
	// Output:
	// 1 42
	// 43 1
}

// A With callback holds one connection; a Do on its context uses it.
func ExamplePool_With() {
	ctx := context.Background()
	pool, err := redispool.New(os.Getenv("ACTORPOOL_REDIS")) // such as "127.0.0.1:6379"
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(ctx)

	err = pool.With(ctx, func(ctx context.Context, c *redispool.Conn) error {
		id, err := redis.Int64(c.Do("CLIENT", "ID"))
		if err != nil {
			return err
		}
		same, err := redis.Int64(pool.Do(ctx, "CLIENT", "ID"))
		if err != nil {
			return err
		}
		fmt.Println("same connection:", id == same)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: same connection: true
}
