package pgactor_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// Login is what the login handler knows about a successful login.
type Login struct {
	UserID int
	Device string
}

// The task actor's case, made durable: after a user logs in, record their
// device in user_device without making them wait, and lose no row when a
// process is killed or the server restarts. The handler writes through the
// task's own transaction, so each row is written exactly once however many
// times a task runs.
func Example() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	// Once per database, by a deploy step or `actorpool migrate`.
	const schema = "pgactor_example"
	if _, _, err := pgactor.Migrate(ctx, pool, schema); err != nil {
		log.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgactor_example.user_device (user_id int PRIMARY KEY, device text)`); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, `DROP SCHEMA pgactor_example CASCADE`)

	written := make(chan int, 10)
	devices, err := pgactor.New(ctx, pool, "createUserDevice", func(ctx context.Context, task actor.Task[Login]) error {
		tx, err := pgactor.Tx(ctx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO pgactor_example.user_device VALUES ($1, $2)`, task.Payload.UserID, task.Payload.Device)
		if err == nil {
			written <- task.Payload.UserID
		}
		return err
	}, pgactor.Config[Login]{
		Schema:      schema,
		Workers:     2,
		MaxAttempts: 3,
		Timeout:     5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}

	// The login handler: answer the user once the task is stored.
	for id := 1; id <= 3; id++ {
		if _, err := devices.Send(ctx, Login{UserID: id, Device: fmt.Sprintf("phone-%d", id)}); err != nil {
			log.Printf("device of user %d not recorded: %v", id, err)
		}
	}
	for range 3 {
		<-written
	}

	// At shutdown: running tasks finish or go back to the queue for
	// another process; none is lost.
	if err := devices.Close(ctx); err != nil {
		log.Print(err)
	}
	s, err := devices.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accepted %d, completed %d, dead-lettered %d\n", s.Accepted, s.Completed, s.DeadLettered)
	// Output: accepted 3, completed 3, dead-lettered 0
}
