package actor

import (
	"context"
	"strconv"
	"testing"
)

// TestTypeCache checks that the sends of one type share their extras, up to
// maxTypes names, and that a name beyond those still gets extras of its own.
func TestTypeCache(t *testing.T) {
	noLeaks(t)
	var c typeCache
	for i := range maxTypes + 10 {
		typ := "type " + strconv.Itoa(i)
		x, y := c.extras(typ), c.extras(typ)
		if x.typ != typ || y.typ != typ {
			t.Fatalf("extras(%q) name %q and %q", typ, x.typ, y.typ)
		}
		if shared := x == y; shared != (i < maxTypes) {
			t.Errorf("name %d of %d: shared = %v", i+1, maxTypes+10, shared)
		}
	}
	if n := len(*c.m.Load()); n != maxTypes {
		t.Errorf("the cache holds %d names, want %d", n, maxTypes)
	}
}

// TestSendManyTypes sends tasks of more types than the cache keeps and
// checks that each reaches the handler with its own.
func TestSendManyTypes(t *testing.T) {
	noLeaks(t)
	var got record[Task[int]]
	a := newActor(t, "types", func(_ context.Context, task Task[int]) error {
		got.add(task)
		return nil
	}, Config[int]{})
	const n = maxTypes + 20
	for i := range n {
		if err := a.Send(t.Context(), i, WithType("type "+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Ask(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	tasks := got.get()
	for i, task := range tasks[:n] {
		if want := "type " + strconv.Itoa(i); task.Type != want || task.Payload != i {
			t.Errorf("task %d: payload %d, type %q; want type %q", i, task.Payload, task.Type, want)
		}
	}
	if last := tasks[n]; last.Type != "int" {
		t.Errorf("a task sent without a type has type %q, want int", last.Type)
	}
}
