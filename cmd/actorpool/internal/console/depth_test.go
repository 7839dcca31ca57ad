package console

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestRun proves that Run samples every actor's depth at once and then
// every Interval, keeps the newest Samples of each, forgets an actor gone
// from the schema, and returns when its context ends.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newMemAdmin()
		c, err := New(a, Options{Interval: time.Second, Samples: 3})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()

		for i := range 5 {
			synctest.Wait()
			a.mu.Lock()
			a.actors[0].Stats.Queued = i
			a.mu.Unlock()
			time.Sleep(time.Second)
		}
		synctest.Wait()
		c.mu.Lock()
		mail := c.samples["mail"]
		var depths []int
		for _, s := range mail {
			depths = append(depths, s.depth)
		}
		c.mu.Unlock()
		if want := []int{2, 3, 4}; len(depths) != 3 || depths[0] != want[0] || depths[2] != want[2] {
			t.Errorf("depths kept %v, want the newest three samples %v", depths, want)
		}
		if len(mail) == 3 && mail[2].at.Sub(mail[0].at) != 2*time.Second {
			t.Errorf("samples %v apart, want one a second", mail[2].at.Sub(mail[0].at))
		}

		a.mu.Lock()
		a.actors = a.actors[:1]
		a.mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		c.mu.Lock()
		_, audit := c.samples["audit"]
		c.mu.Unlock()
		if audit {
			t.Error("samples kept of an actor gone from the schema")
		}
		cancel()
		<-done
	})
}

// TestChart proves that the chart puts the newest sample at the right
// edge, the window's start at the left, and the largest depth at the top.
func TestChart(t *testing.T) {
	c, err := New(newMemAdmin(), Options{Interval: time.Second, Samples: 10})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i, d := range []int{0, 4, 2} {
		c.record(now.Add(time.Duration(i-2)*5*time.Second), []ActorInfo{{Name: "mail", Stats: Stats{Queued: d}}})
	}
	ch := c.chart("mail", now)
	if want := "0.0,60.0 150.0,0.0 300.0,30.0"; ch.Points != want || ch.Max != 4 || ch.Last != 2 || ch.Span != "10s" || ch.Count != 3 {
		t.Errorf("chart %+v, want points %q, max 4, last 2 over 10s", ch, want)
	}
	if ch := c.chart("nobody", now); ch.Points != "" || ch.Count != 0 {
		t.Errorf("chart of an actor without samples: %+v", ch)
	}
}

// TestEmbedded proves that the console fetches nothing from elsewhere:
// no template, stylesheet or script names another host.
func TestEmbedded(t *testing.T) {
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s has %q: the console serves only what it embeds", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
