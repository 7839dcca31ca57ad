package metrics_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/metrics"
)

// A pool reports its histograms through its Config.Observer and its gauges
// and counters through Stats; an actor's handler is wrapped to time its
// tasks. Serve reg with promhttp.HandlerFor to expose them.
func Example() {
	m := metrics.NewCollector(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)

	pool, err := actorpool.New(actorpool.FactoryFuncs[*strings.Builder]{
		CreateFunc: func(ctx context.Context) (*strings.Builder, error) { return new(strings.Builder), nil },
	}, actorpool.Config{Name: "buffers", MaxObjects: 4, Observer: m.PoolObserver("buffers")})
	if err != nil {
		log.Fatal(err)
	}
	m.AddPool("buffers", pool.Stats)

	handle := func(ctx context.Context, t actor.Task[string]) error { return nil }
	audit, err := actor.New("audit", metrics.InstrumentHandler(m.ActorObserver("audit"), handle), actor.Config[string]{})
	if err != nil {
		log.Fatal(err)
	}
	m.AddActor("audit", audit.Stats)

	lease, err := pool.Acquire(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	audit.Send(context.Background(), "took a buffer")
	audit.Close(context.Background())

	n, _ := testutil.GatherAndCount(reg, "actorpool_pool_hold_seconds")
	fmt.Println("hold histograms:", n)
	out, _ := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain, "actorpool_pool_in_use_objects", "actorpool_actor_tasks_completed_total")
	fmt.Print(string(out))

	lease.Release()
	pool.Close(context.Background())
	m.RemovePool("buffers")
	m.RemoveActor("audit")
	// Output:
	// hold histograms: 1
	// # HELP actorpool_actor_tasks_completed_total Tasks whose handler succeeded.
	// # TYPE actorpool_actor_tasks_completed_total counter
	// actorpool_actor_tasks_completed_total{actor="audit"} 1
	// # HELP actorpool_pool_in_use_objects Objects lent out.
	// # TYPE actorpool_pool_in_use_objects gauge
	// actorpool_pool_in_use_objects{pool="buffers"} 1
}
