package metrics

import (
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// TestEveryStatsField holds the collector to the README's "every Stats
// counter and gauge": for each field of actorpool.Stats, of its
// DestroyedBy, and of actor.Stats, a snapshot with that field alone set
// must be reported with its value in some series. Destroyed is the sum of
// DestroyedBy, whose fields are reported by reason. Before the fix
// CreateAttempts, Destroying and Hijacked — a hijacked object left the
// objects gauge with no counter to say where it went — and the actor's
// Idle workers were read by no series.
func TestEveryStatsField(t *testing.T) {
	const value = 7
	reported := func(c *Collector) map[float64]bool {
		ch := make(chan prometheus.Metric, 256)
		c.Collect(ch)
		close(ch)
		got := map[float64]bool{}
		for m := range ch {
			var d dtoMetric
			if err := m.Write(&d.Metric); err != nil {
				t.Fatal(err)
			}
			got[d.value()] = true
		}
		return got
	}
	set := func(v reflect.Value) {
		if v.Type() == reflect.TypeFor[time.Duration]() {
			v.SetInt(int64(value * time.Second))
			return
		}
		switch v.Kind() {
		case reflect.Int, reflect.Int64:
			v.SetInt(value)
		case reflect.Uint64:
			v.SetUint(value)
		default:
			t.Fatalf("a field of kind %v", v.Kind())
		}
	}

	type poolField struct {
		name string
		set  func(*actorpool.Stats)
	}
	var poolFields []poolField
	for f := range reflect.TypeFor[actorpool.Stats]().Fields() {
		switch f.Name {
		case "Destroyed": // the sum of DestroyedBy
		case "DestroyedBy":
			for g := range f.Type.Fields() {
				poolFields = append(poolFields, poolField{"DestroyedBy." + g.Name, func(s *actorpool.Stats) {
					set(reflect.ValueOf(&s.DestroyedBy).Elem().FieldByIndex(g.Index))
				}})
			}
		default:
			poolFields = append(poolFields, poolField{f.Name, func(s *actorpool.Stats) {
				set(reflect.ValueOf(s).Elem().FieldByIndex(f.Index))
			}})
		}
	}
	for _, f := range poolFields {
		var st actorpool.Stats
		f.set(&st)
		c := NewCollector(Options{})
		c.AddPool("p", func() actorpool.Stats { return st })
		if !reported(c)[value] {
			t.Errorf("actorpool.Stats.%s = %d is reported by no series", f.name, value)
		}
	}
	for f := range reflect.TypeFor[actor.Stats]().Fields() {
		var st actor.Stats
		set(reflect.ValueOf(&st).Elem().FieldByIndex(f.Index))
		c := NewCollector(Options{})
		c.AddActor("a", func() actor.Stats { return st })
		if !reported(c)[value] {
			t.Errorf("actor.Stats.%s = %d is reported by no series", f.Name, value)
		}
	}
}

// dtoMetric reads a gauge's or a counter's value.
type dtoMetric struct{ dto.Metric }

func (d *dtoMetric) value() float64 {
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}
