package pgpool_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

func Example() {
	ctx := context.Background()
	// Such as "postgres://app@127.0.0.1:5432/app?pool_max_conns=16&connect_timeout=5".
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	var sum int
	if err := pool.QueryRow(ctx, "SELECT $1::int + $2::int", 40, 2).Scan(&sum); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum)

	rows, _ := pool.Query(ctx, "SELECT generate_series(1, 3)")
	nums, err := pgx.CollectRows(rows, pgx.RowTo[int32]) // closing the rows gives the connection back
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(nums)
	// Output:
	// 42
	// [1 2 3]
}

// A transaction: the connection goes back to the pool on Commit or
// Rollback.
func ExamplePool_Begin() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx) // does nothing after Commit
	if _, err := tx.Exec(ctx, "CREATE TEMPORARY TABLE greeting (msg text) ON COMMIT DROP"); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO greeting VALUES ('hello')"); err != nil {
		log.Fatal(err)
	}
	var msg string
	if err := tx.QueryRow(ctx, "SELECT msg FROM greeting").Scan(&msg); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(msg)
	// Output: hello
}

// Several statements on one connection. A connection given back inside a
// transaction would be closed, not reused; this one is given back clean.
func ExamplePool_Acquire() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	conn, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET application_name = 'report'"); err != nil {
		log.Fatal(err)
	}
	var name string
	if err := conn.QueryRow(ctx, "SHOW application_name").Scan(&name); err != nil {
		log.Fatal(err)
	}
	fmt.Println(name)
	// Output: report
}

// Code that takes a context runs on the connection of the With around it,
// and so inside its transaction.
func ExamplePool_With() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	// appName knows nothing of transactions: it takes a context.
	appName := func(ctx context.Context) string {
		var name string
		if err := pool.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&name); err != nil {
			log.Fatal(err)
		}
		return name
	}
	err = pool.With(ctx, func(ctx context.Context, conn *pgpool.Conn) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL application_name = 'inside'"); err != nil {
				return err
			}
			fmt.Println(appName(ctx))
			return nil
		})
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(appName(ctx) == "inside")
	// Output:
	// inside
	// false
}
