package adapter

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestClock checks that a clock ticks once per period until it is closed,
// and that a clock of period zero ticks only when told.
func TestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewClock(time.Second)
		time.Sleep(2500 * time.Millisecond)
		if n := c.Now(); n != 2 {
			t.Errorf("ticks after 2.5 s: %d, want 2", n)
		}
		c.Close()
		c.Close()
		time.Sleep(5 * time.Second)
		if n := c.Now(); n != 2 {
			t.Errorf("ticks after Close: %d, want still 2", n)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		c := NewClock(0)
		time.Sleep(time.Hour)
		c.Tick()
		if n := c.Now(); n != 1 {
			t.Errorf("ticks of a still clock told to tick once: %d, want 1", n)
		}
		c.Close()
	})
}
