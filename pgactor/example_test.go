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

// An operator's view of a schema's actors, without their payload types:
// page through the scheduled tasks of one, run one of them now, delete
// the others, and pause the actor in every process.
func ExampleAdmin_Tasks() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	const schema = "pgactor_example_admin"
	if _, _, err := pgactor.Migrate(ctx, pool, schema); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, `DROP SCHEMA pgactor_example_admin CASCADE`)

	// A send-only actor: other processes run the mail.
	mail, err := pgactor.New[string](ctx, pool, "mail", nil, pgactor.Config[string]{Schema: schema})
	if err != nil {
		log.Fatal(err)
	}
	defer mail.Close(ctx)
	for _, to := range []string{"ann", "bob", "cy"} {
		if _, err := mail.Send(ctx, to, pgactor.After(time.Hour)); err != nil {
			log.Fatal(err)
		}
	}

	admin, err := pgactor.NewAdmin(ctx, pool, schema)
	if err != nil {
		log.Fatal(err)
	}
	var ids []uint64
	f := pgactor.TaskFilter{Actor: "mail", States: []pgactor.TaskState{pgactor.TaskScheduled}, Limit: 2}
	for {
		page, err := admin.Tasks(ctx, f)
		if err != nil {
			log.Fatal(err)
		}
		for _, t := range page.Tasks {
			fmt.Println(t.State, string(t.Payload))
			ids = append(ids, t.ID)
		}
		if page.Next == 0 {
			break
		}
		f.After = page.Next
	}
	moved, err := admin.RunNow(ctx, ids[0])
	if err != nil {
		log.Fatal(err)
	}
	deleted, err := admin.Delete(ctx, ids[1:]...)
	if err != nil {
		log.Fatal(err)
	}
	if err := admin.Pause(ctx, "mail"); err != nil {
		log.Fatal(err)
	}
	s, err := admin.Stats(ctx, "mail")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("run now %d, deleted %d; queued %d, paused %v\n", len(moved), len(deleted), s.Queued, s.Paused)
	// Output:
	// scheduled "ann"
	// scheduled "bob"
	// scheduled "cy"
	// run now 1, deleted 2; queued 1, paused true
}

// A handler whose upstream says "not now" snoozes its task rather than
// fail it: the task waits as a row, holding no worker, and its attempt is
// not counted, so that MaxAttempts 1 still allows it.
func ExampleSnooze() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	const schema = "pgactor_example_snooze"
	if _, _, err := pgactor.Migrate(ctx, pool, schema); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, `DROP SCHEMA pgactor_example_snooze CASCADE`)

	busy := 2 // the upstream refuses the first two calls
	done := make(chan struct{})
	rates, err := pgactor.New(ctx, pool, "fetchRate", func(ctx context.Context, task actor.Task[string]) error {
		if busy > 0 {
			busy--
			fmt.Printf("attempt %d: upstream busy, snoozing\n", task.Attempt)
			return pgactor.Snooze(10 * time.Millisecond)
		}
		fmt.Printf("attempt %d: fetched %s\n", task.Attempt, task.Payload)
		close(done)
		return nil
	}, pgactor.Config[string]{Schema: schema, Workers: 1, MaxAttempts: 1})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := rates.Send(ctx, "EUR/USD"); err != nil {
		log.Fatal(err)
	}
	<-done
	if err := rates.Close(ctx); err != nil {
		log.Print(err)
	}
	s, err := rates.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("completed %d, failed %d\n", s.Completed, s.Failed)
	// Output:
	// attempt 1: upstream busy, snoozing
	// attempt 1: upstream busy, snoozing
	// attempt 1: fetched EUR/USD
	// completed 1, failed 0
}
