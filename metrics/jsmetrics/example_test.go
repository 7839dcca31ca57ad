package jsmetrics_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/actorpool/actorpool/metrics/jsmetrics"
)

// The collector watches an actor that this process only sends to: its
// series carry the actor's name and the prefix of its streams.
func Example() {
	srv, err := jsserver.Start(jsserver.Options{}) // or connect to a NATS of your own
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	ctx := context.Background()
	mail, err := jsactor.New[string](ctx, nc, "mail", nil, jsactor.Config[string]{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := mail.SendBatch(ctx, []string{"ann", "bob"}); err != nil {
		log.Fatal(err)
	}
	mail.Close(ctx) // adds its counters to the server

	c := jsmetrics.NewCollector(jsmetrics.Options{})
	if err := c.Add(nc, jsactor.DefaultPrefix, "mail"); err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "actorpool_actor_tasks_accepted_total", "actorpool_actor_queued_tasks":
			for _, m := range f.GetMetric() {
				fmt.Print(f.GetName(), "{")
				for i, l := range m.GetLabel() {
					if i > 0 {
						fmt.Print(",")
					}
					fmt.Printf("%s=%q", l.GetName(), l.GetValue())
				}
				v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
				fmt.Println("}", v)
			}
		}
	}
	// Output:
	// actorpool_actor_queued_tasks{actor="mail",prefix="actorpool"} 2
	// actorpool_actor_tasks_accepted_total{actor="mail",prefix="actorpool"} 2
}
