package jsactor_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/nats-io/nats.go"
)

type Invoice struct {
	Customer string
	Cents    int64
}

// A durable actor on an embedded NATS server: tasks are stored in a
// JetStream stream, and every process that runs the actor on the same
// server shares them.
func Example() {
	ctx := context.Background()
	srv, err := jsserver.Start(jsserver.Options{}) // or nats.Connect a cluster's URLs
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	checked := make(chan struct{}) // the task stays live until the second send is refused
	done := make(chan string, 1)
	invoices, err := jsactor.New(ctx, nc, "invoices", func(ctx context.Context, task actor.Task[Invoice]) error {
		<-checked
		done <- fmt.Sprintf("invoice for %s: %d cents (attempt %d)", task.Payload.Customer, task.Payload.Cents, task.Attempt)
		return nil
	}, jsactor.Config[Invoice]{Workers: 4, MaxAttempts: 5})
	if err != nil {
		log.Fatal(err)
	}
	defer invoices.Close(ctx)

	// Send returns once the stream has stored the task. A unique key keeps
	// a second invoice for the same order out while the first is live.
	if _, err := invoices.Send(ctx, Invoice{Customer: "ann", Cents: 1250}, jsactor.UniqueKey("order-17")); err != nil {
		log.Fatal(err)
	}
	_, err = invoices.Send(ctx, Invoice{Customer: "ann", Cents: 1250}, jsactor.UniqueKey("order-17"))
	fmt.Println(errors.Is(err, jsactor.ErrDuplicate))
	close(checked)
	fmt.Println(<-done)
	// Output:
	// true
	// invoice for ann: 1250 cents (attempt 1)
}

// Delayed tasks, retries and dead letters.
func ExampleActor_Replay() {
	ctx := context.Background()
	srv, err := jsserver.Start(jsserver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	fixed := make(chan struct{})
	ran := make(chan int, 4)
	reminders, err := jsactor.New(ctx, nc, "reminders", func(ctx context.Context, task actor.Task[string]) error {
		select {
		case <-fixed:
			ran <- task.Attempt
			return nil
		default:
			return fmt.Errorf("mail server down")
		}
	}, jsactor.Config[string]{MaxAttempts: 2, Backoff: actor.Backoff{Initial: 10 * time.Millisecond}, OnError: func(*actor.TaskError) {}})
	if err != nil {
		log.Fatal(err)
	}
	defer reminders.Close(ctx)

	if _, err := reminders.Send(ctx, "renew your plan", jsactor.After(50*time.Millisecond)); err != nil {
		log.Fatal(err)
	}
	var letters []jsactor.DeadLetter[string]
	for len(letters) == 0 {
		time.Sleep(20 * time.Millisecond)
		letters, err = reminders.DeadLetters(ctx, jsactor.LetterFilter{})
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(letters[0].Reason, letters[0].Attempts, letters[0].Err)

	close(fixed)
	if _, err := reminders.Replay(ctx, letters[0].ID); err != nil {
		log.Fatal(err)
	}
	fmt.Println("replayed; attempt", <-ran)
	// Output:
	// max attempts 2 mail server down
	// replayed; attempt 1
}
