package config_test

import (
	"context"
	"fmt"
	"net"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/config"
)

const settings = `
pools:
  upstream:
    max_objects: 8
    max_idle_time: 5m
    create_timeout: 2s
actors:
  audit:
    workers: 2
    capacity: 1000
    max_attempts: 3
`

// A file's pools and actors are ready for actorpool.New and actor.New; what
// only code can say, such as the factory and the handler, is added then.
func Example() {
	f, err := config.Parse("app.yaml", []byte(settings), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	up, _ := f.Pool("upstream")
	var dialer net.Dialer
	pool, err := actorpool.New(actorpool.FactoryFuncs[net.Conn]{
		CreateFunc:  func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", "127.0.0.1:9") },
		DestroyFunc: func(c net.Conn) { c.Close() },
	}, up.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close(context.Background())

	a, _ := f.Actor("audit")
	audit, err := actor.New("audit", func(ctx context.Context, t actor.Task[string]) error {
		return nil // write the audit row
	}, config.ActorConfig[string](a))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer audit.Close(context.Background())

	fmt.Println(pool.Config().Name, pool.Config().MaxObjects, pool.Config().MaxIdleTime)
	fmt.Println(audit.Name(), a.Workers, a.Capacity)
	// Output:
	// upstream 8 5m0s
	// audit 2 1000
}

// Every problem in a file is reported at once, with where it is and the rule
// it breaks.
func ExampleParse_problems() {
	const bad = `
pools:
  upstream:
    max_objects: 8
    min_idle: 10
    max_idle_time: 5
    max_queue: 100
`
	_, err := config.Parse("app.yaml", []byte(bad), nil)
	fmt.Println(err)
	// Output:
	// config: 3 problems in app.yaml:
	//	app.yaml:5:15: pools.upstream.min_idle = 10: must not exceed max_objects (8)
	//	app.yaml:6:20: pools.upstream.max_idle_time = 5: must be a duration with a unit, such as 5s, 250ms or 1m30s
	//	app.yaml:7:5: pools.upstream.max_queue: unknown setting "max_queue"; did you mean "max_queue_size"?
}

// A variable named after a pool and a setting overrides the file.
func ExampleEnvVar() {
	fmt.Println(config.EnvVar("pool", "upstream", "max_objects"))
	fmt.Println(config.EnvVar("actor", "audit", "backoff.initial"))

	f, _ := config.Parse("app.yaml", []byte(settings), []string{"ACTORPOOL_POOL_UPSTREAM_MAX_OBJECTS=32"})
	up, _ := f.Pool("upstream")
	fmt.Println(up.Config.MaxObjects)
	// Output:
	// ACTORPOOL_POOL_UPSTREAM_MAX_OBJECTS
	// ACTORPOOL_ACTOR_AUDIT_BACKOFF_INITIAL
	// 32
}
