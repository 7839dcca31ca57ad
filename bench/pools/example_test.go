package pools_test

import (
	"context"
	"fmt"

	"github.com/actorpool/actorpool/bench/pools"
)

// Every pool is driven the same way: build it from a size and a factory,
// take and give back with Do, close it.
func Example() {
	cs, err := pools.Select("actorpool,puddle")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cs {
		f := &pools.Factory{}
		p, err := c.New(pools.Config{Size: 2, Factory: f})
		if err != nil {
			fmt.Println(err)
			return
		}
		for range 3 {
			if err := p.Do(context.Background(), func(o *pools.Object) {}); err != nil {
				fmt.Println(err)
			}
		}
		if err := p.Close(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s: created %d, destroyed %d\n", c.Name, f.Created(), f.Destroyed())
	}
	// Output:
	// actorpool: created 1, destroyed 1
	// puddle: created 1, destroyed 1
}

// Check is what every pool passes before it is measured.
func ExampleCheck() {
	cs, _ := pools.Select("chan")
	fmt.Println(pools.Check(context.Background(), cs[0]))
	// Output: <nil>
}
