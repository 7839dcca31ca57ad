package pgactor_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// A report sent once a night, and a cache swept every quarter of an hour,
// however many replicas of the service run; and a reminder mailed at most
// once an hour to each user.
func ExampleActor_Schedule() {
	ctx := context.Background()
	pool, err := pgpool.New(ctx, os.Getenv("ACTORPOOL_POSTGRES"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	const schema = "pgactor_example_schedule"
	if _, _, err := pgactor.Migrate(ctx, pool, schema); err != nil {
		log.Fatal(err)
	}
	defer pool.Exec(ctx, `DROP SCHEMA pgactor_example_schedule CASCADE`)

	jobs, err := pgactor.New(ctx, pool, "jobs", func(ctx context.Context, task actor.Task[string]) error {
		// A scheduled task knows its schedule and period: the night a
		// nightly report is for, however late it runs.
		if name, period, ok := pgactor.ScheduledFor(ctx); ok {
			log.Printf("running %s: %s for %v", task.Payload, name, period)
		}
		return nil
	}, pgactor.Config[string]{Schema: schema})
	if err != nil {
		log.Fatal(err)
	}
	defer jobs.Close(ctx)

	// Every replica registers its schedules as it starts; the same spec
	// keeps the schedule's next fire time, so a night missed while all
	// were down is sent once when the first comes back.
	if err := jobs.Schedule(ctx, "nightly-report", "0 2 * * *", "sales report"); err != nil {
		log.Fatal(err)
	}
	if err := jobs.Schedule(ctx, "sweep", "@every 15m", "sweep the cache", pgactor.OnMissed(pgactor.SkipMissed)); err != nil {
		log.Fatal(err)
	}
	schedules, err := jobs.Schedules(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range schedules {
		fmt.Printf("%s %q, missed: %v\n", s.Name, s.Spec, s.OnMissed)
	}

	// At most one reminder an hour per user: the second is refused.
	if _, err := jobs.Send(ctx, "remind ann", pgactor.UniqueFor("remind:ann", time.Hour)); err != nil {
		log.Fatal(err)
	}
	_, err = jobs.Send(ctx, "remind ann", pgactor.UniqueFor("remind:ann", time.Hour))
	fmt.Println("second reminder refused:", errors.Is(err, pgactor.ErrDuplicate))
	// Output:
	// nightly-report "0 2 * * *", missed: run_once
	// sweep "@every 15m", missed: skip
	// second reminder refused: true
}
