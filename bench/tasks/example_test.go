package tasks_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/actorpool/actorpool/bench/tasks"
)

// Every executor is driven the same way: build it with a worker count, a
// queue bound and the task, submit, close.
func Example() {
	cs, _ := tasks.Select("actor,pond")
	for _, c := range cs {
		var ran atomic.Int64
		e, err := c.New(tasks.Spec{Workers: 2, Queue: 8, Tasks: 100, Task: func() { ran.Add(1) }})
		if err != nil {
			fmt.Println(err)
			return
		}
		for range 100 {
			if err := e.Submit(context.Background()); err != nil {
				fmt.Println(err)
			}
		}
		if err := e.Close(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s ran %d tasks\n", c.Name, ran.Load())
	}
	// Output:
	// actor ran 100 tasks
	// pond ran 100 tasks
}
