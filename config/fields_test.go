package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// TestEveryConfigFieldHasAKey holds the package to its doc: "Every
// setting of actorpool.Config and actor.Config that is not code has a
// key". A field added to either Config without a key fails here, as
// HandoffAfter did: a file could not set it, "handoff_after" being an
// unknown setting.
func TestEveryConfigFieldHasAKey(t *testing.T) {
	code := map[string]bool{ // what only a program can set, and the pool's name, which is its key
		"Name": true, "Logger": true, "Observer": true, "OnError": true, "DeadLetters": true,
	}
	keyed := func(goNames []string) map[string]bool {
		m := map[string]bool{}
		for _, n := range goNames {
			m[n] = true
		}
		return m
	}
	var poolNames, actorNames []string
	for _, l := range leaves(poolSettings, "") {
		poolNames = append(poolNames, l.goName)
	}
	for _, l := range leaves(actorSettings, "") {
		actorNames = append(actorNames, l.goName)
	}
	for _, c := range []struct {
		typ  reflect.Type
		keys map[string]bool
	}{
		{reflect.TypeFor[actorpool.Config](), keyed(poolNames)},
		{reflect.TypeFor[actor.Config[int]](), keyed(actorNames)},
	} {
		for f := range c.typ.Fields() {
			name := f.Name
			if f.Type == reflect.TypeFor[actor.Backoff]() {
				for g := range f.Type.Fields() {
					if !c.keys[name+"."+g.Name] {
						t.Errorf("%s.%s.%s has no key in a file", c.typ, name, g.Name)
					}
				}
				continue
			}
			if !code[name] && !c.keys[name] {
				t.Errorf("%s.%s has no key in a file", c.typ, name)
			}
		}
	}

	// The key reaches the field, from the file and from the environment.
	f, err := Parse("f.yaml", []byte("pools:\n  a: {max_objects: 1, handoff_after: 1ms}\n  b: {max_objects: 1}\n"),
		[]string{"ACTORPOOL_POOL_B_HANDOFF_AFTER=2ms"})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := f.Pool("a"); a.Config.HandoffAfter != time.Millisecond {
		t.Errorf("pool a: HandoffAfter = %v, want 1ms", a.Config.HandoffAfter)
	}
	if b, _ := f.Pool("b"); b.Config.HandoffAfter != 2*time.Millisecond {
		t.Errorf("pool b: HandoffAfter = %v, want 2ms from the environment", b.Config.HandoffAfter)
	}
}
