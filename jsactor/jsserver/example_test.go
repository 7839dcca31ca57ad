package jsserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/actorpool/actorpool/jsactor/jsserver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func Example() {
	// The zero Options: a free loopback port, a temporary store that
	// Shutdown removes, fsync every DefaultSyncInterval.
	s, err := jsserver.Start(jsserver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Shutdown()

	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GREETINGS", Subjects: []string{"greet.>"}})
	if err != nil {
		log.Fatal(err)
	}
	ack, err := js.Publish(ctx, "greet.world", []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	m, err := st.GetMsg(ctx, ack.Sequence)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s\n", m.Subject, m.Data)
	// Output: greet.world: hello
}

func ExampleStartCluster() {
	c, err := jsserver.StartCluster(3, jsserver.Options{Name: "example"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Shutdown()

	nc, err := nats.Connect(c.ClientURLs())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	// Replicated three times, an acknowledged message survives the loss
	// of any one server.
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name:     "ORDERS",
		Subjects: []string{"orders.>"},
		Replicas: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.StreamLeader("ORDERS") != nil)
	// Output: true
}
