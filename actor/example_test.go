package actor_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// Login is what the login handler knows about a successful login.
type Login struct {
	UserID int
	Device string
}

// The seed's case: after a user logs in, record their device in the
// user_device table without making them wait, through a pool of database
// connections, and lose no row when the server shuts down.
//
// The database here is in memory and its pool a channel of connections, so
// that the example runs anywhere; with the actorpool package it would be
// pool.With(ctx, func(conn) error { ... }).
func Example() {
	db := openDB(2) // two connections

	audit, err := actor.New("DBAsyncTaskActor", func(ctx context.Context, task actor.Task[Login]) error {
		conn, err := db.acquire(ctx)
		if err != nil {
			return err
		}
		defer db.release(conn)
		return conn.insertUserDevice(ctx, task.Payload)
	}, actor.Config[Login]{
		Workers:     2,   // one per connection
		Capacity:    100, // beyond this, logins wait rather than memory grow
		MaxAttempts: 3,
		Timeout:     5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}

	// The login handler: answer the user at once, write the row later.
	for id := 1; id <= 10; id++ {
		login := Login{UserID: id, Device: fmt.Sprintf("phone-%d", id)}
		if err := audit.Send(context.Background(), login, actor.WithType("createUserDevice")); err != nil {
			log.Printf("audit row for user %d not queued: %v", id, err)
		}
	}

	// At shutdown: finish every queued row, within the time the platform
	// gives the process; rows that cannot make it go to the dead letters.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := audit.Close(ctx); err != nil {
		log.Print(err)
	}

	fmt.Println(len(db.rows()), "rows:", db.rows())
	s := audit.Stats()
	fmt.Printf("submitted %d, completed %d, dead-lettered %d\n", s.Submitted, s.Completed, s.DeadLettered)
	// Output:
	// 10 rows: [{1 phone-1} {2 phone-2} {3 phone-3} {4 phone-4} {5 phone-5} {6 phone-6} {7 phone-7} {8 phone-8} {9 phone-9} {10 phone-10}]
	// submitted 10, completed 10, dead-lettered 0
}

// Quote asks for a price and carries where the answer goes.
type Quote struct {
	Item  string
	Price *int
}

// Ask waits for the task to end; a payload can carry the place for an answer.
func ExampleActor_Ask() {
	prices := map[string]int{"tea": 3, "cake": 5}
	quotes, err := actor.New("quotes", func(ctx context.Context, task actor.Task[Quote]) error {
		p, ok := prices[task.Payload.Item]
		if !ok {
			return actor.Permanent(fmt.Errorf("no price for %q", task.Payload.Item))
		}
		*task.Payload.Price = p
		return nil
	}, actor.Config[Quote]{OnError: func(*actor.TaskError) {}, DeadLetters: actor.NewRingSink[Quote](10)})
	if err != nil {
		log.Fatal(err)
	}
	defer quotes.Stop()

	var price int
	if err := quotes.Ask(context.Background(), Quote{"cake", &price}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("cake:", price)

	err = quotes.Ask(context.Background(), Quote{"pie", &price})
	var te *actor.TaskError
	if errors.As(err, &te) {
		fmt.Printf("task %d (%s) failed for good: %v\n", te.ID, te.Type, te.Err)
	}
	// Output:
	// cake: 5
	// task 2 (actor_test.Quote) failed for good: no price for "pie"
}

// Retries, an error handler and a dead-letter ring: a mail that cannot be
// sent is retried with backoff, then kept for inspection.
func ExampleRingSink() {
	dead := actor.NewRingSink[string](100)
	mailer, err := actor.New("mailer", func(ctx context.Context, task actor.Task[string]) error {
		if task.Payload == "bounce@example.com" {
			return errors.New("550 mailbox unavailable")
		}
		return nil
	}, actor.Config[string]{
		MaxAttempts: 3,
		Backoff:     actor.Backoff{Initial: time.Millisecond, Multiplier: 2, Jitter: 0.2},
		OnError: func(err *actor.TaskError) {
			fmt.Printf("attempt %d of task %d on %s failed (final %v)\n", err.Attempt, err.ID, err.Worker, err.Final)
		},
		DeadLetters: dead,
	})
	if err != nil {
		log.Fatal(err)
	}
	mailer.Send(context.Background(), "ana@example.com", actor.WithType("welcome"))
	mailer.Send(context.Background(), "bounce@example.com", actor.WithType("welcome"))
	if err := mailer.Close(context.Background()); err != nil {
		log.Fatal(err)
	}

	for l := range dead.Letters() {
		fmt.Printf("dead letter: %s to %s (%s) after %d attempts: %v\n", l.Task.Type, l.Task.Payload, l.Reason, l.Attempts, l.Err)
	}
	// Output:
	// attempt 1 of task 2 on mailer/1 failed (final false)
	// attempt 2 of task 2 on mailer/1 failed (final false)
	// attempt 3 of task 2 on mailer/1 failed (final true)
	// dead letter: welcome to bounce@example.com (max attempts) after 3 attempts: 550 mailbox unavailable
}

// Dead letters written to a file survive a restart and can be replayed once
// the cause is fixed.
func ExampleActor_Replay() {
	dir, err := os.MkdirTemp("", "actor-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.dead.jsonl")

	// First run: the database is down, so every row goes to the file.
	sink, err := actor.OpenFileSink[Login](path)
	if err != nil {
		log.Fatal(err)
	}
	down, _ := actor.New("audit", func(ctx context.Context, task actor.Task[Login]) error {
		return actor.Permanent(errors.New("database is read-only"))
	}, actor.Config[Login]{DeadLetters: sink, OnError: func(*actor.TaskError) {}})
	down.Send(context.Background(), Login{1, "phone"})
	down.Send(context.Background(), Login{2, "laptop"})
	down.Close(context.Background())
	sink.Close()

	// Next run: the database is back.
	db := openDB(1)
	up, _ := actor.New("audit", func(ctx context.Context, task actor.Task[Login]) error {
		conn, err := db.acquire(ctx)
		if err != nil {
			return err
		}
		defer db.release(conn)
		return conn.insertUserDevice(ctx, task.Payload)
	}, actor.Config[Login]{})
	sink, _ = actor.OpenFileSink[Login](path)
	n, err := up.Replay(context.Background(), sink)
	fmt.Println("replayed", n, err)
	up.Close(context.Background())
	sink.Close()

	// The replay moved the letters: the file is empty, and replaying it
	// again sends nothing twice.
	left, _ := os.ReadFile(path)
	fmt.Println("rows:", db.rows(), "left in the file:", len(left), "bytes")
	// Output:
	// replayed 2 <nil>
	// rows: [{1 phone} {2 laptop}] left in the file: 0 bytes
}

// Close with a deadline: what is not done by then is dead-lettered, and the
// error says how much.
func ExampleActor_Close() {
	started := make(chan struct{}, 1)
	slow, err := actor.New("slow", func(ctx context.Context, task actor.Task[int]) error {
		started <- struct{}{}
		<-ctx.Done() // a handler that honours its context
		return ctx.Err()
	}, actor.Config[int]{Grace: time.Second, OnError: func(*actor.TaskError) {}, DeadLetters: actor.NewRingSink[int](10)})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 3 {
		slow.Send(context.Background(), i)
	}
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err = slow.Close(ctx)
	var de *actor.DrainError
	if errors.As(err, &de) {
		fmt.Printf("%d queued and %d in-flight tasks dead-lettered (%s)\n", de.Queued, de.InFlight, de.Reason)
	}
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output:
	// 2 queued and 1 in-flight tasks dead-lettered (drain deadline)
	// true
}

// An elastic actor grows to MaxWorkers under load and lets workers go after
// the keep-alive, down to MinWorkers.
func ExampleConfig_elastic() {
	cfg := actor.Config[string]{
		MinWorkers: 1,
		MaxWorkers: 8,
		KeepAlive:  30 * time.Second,
		Capacity:   1000,
	}
	fmt.Println(cfg.Validate())

	cfg.MinWorkers = 10
	fmt.Println(cfg.Validate())
	// Output:
	// <nil>
	// actor: Config.MinWorkers is 10: must not exceed MaxWorkers (8)
}

// db is an in-memory user_device table behind a pool of connections.
type db struct {
	conns chan *conn
	mu    sync.Mutex
	table []Login
}

type conn struct{ db *db }

func openDB(conns int) *db {
	d := &db{conns: make(chan *conn, conns)}
	for range conns {
		d.conns <- &conn{d}
	}
	return d
}

func (d *db) acquire(ctx context.Context) (*conn, error) {
	select {
	case c := <-d.conns:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (d *db) release(c *conn) { d.conns <- c }

func (c *conn) insertUserDevice(ctx context.Context, l Login) error {
	c.db.mu.Lock()
	defer c.db.mu.Unlock()
	c.db.table = append(c.db.table, l)
	return nil
}

// rows returns the table ordered by user.
func (d *db) rows() []Login {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows := slices.Clone(d.table)
	slices.SortFunc(rows, func(a, b Login) int { return a.UserID - b.UserID })
	return rows
}
