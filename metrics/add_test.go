package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// TestAddRefusesWhatCannotBeScraped: a nil Stats func, or an empty name —
// a label whose value is empty is, to Prometheus, no label at all — is
// refused by AddPool and AddActor, where the mistake is made. Before the
// fix both were accepted, and a nil func panicked in every scrape that
// followed, which the registry recovers as an error for the whole
// collector: the series of every pool and actor sorted after it went
// missing with it.
func TestAddRefusesWhatCannotBeScraped(t *testing.T) {
	c := NewCollector(Options{})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	if err := c.AddPool("a", nil); err == nil {
		t.Error(`AddPool("a", nil) succeeded`)
	}
	if err := c.AddPool("", func() actorpool.Stats { return poolStats }); err == nil {
		t.Error(`AddPool("", stats) succeeded`)
	}
	if err := c.AddActor("a", nil); err == nil {
		t.Error(`AddActor("a", nil) succeeded`)
	}
	if err := c.AddActor("", func() actor.Stats { return actorStats }); err == nil {
		t.Error(`AddActor("", stats) succeeded`)
	}
	if err := c.AddPool("b", func() actorpool.Stats { return poolStats }); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "actorpool_pool_objects", "actorpool_actor_workers"); err != nil || n != 1 {
		t.Errorf("scrape: %d series of objects and workers, %v; want pool b's alone", n, err)
	}
}
