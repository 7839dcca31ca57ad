package jsserver

import (
	"testing"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// TestClusterPlacesAtOnce checks that a cluster StartCluster returns can
// place a stream on all its servers at once: the first stream of three
// replicas, created without a retry, is accepted. A meta leader that has
// not yet received every server's statistics refuses it with "no suitable
// peers for placement", which a bench run met right after the start.
func TestClusterPlacesAtOnce(t *testing.T) {
	leakcheck.Check(t)
	for range 4 {
		c, err := StartCluster(3, Options{Name: "place"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Shutdown) // after a failure; Shutdown runs once
		createStream(t, connect(t, c.ClientURLs()), "R3", 3)
		c.Shutdown()
	}
}
