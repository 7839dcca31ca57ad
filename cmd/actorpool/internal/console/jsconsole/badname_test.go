package jsconsole

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/actorpool/actorpool/cmd/actorpool/internal/console"
)

// TestActorNameNoActorHas proves that a URL naming an actor that no
// jsactor actor can have (its name holds a '.', a space, a '*'...) is
// answered as one naming an actor that is not there, 404, and not as a
// failure of the server, 500, with NATS's "invalid stream name".
func TestActorNameNoActorHas(t *testing.T) {
	r := newRig(t)
	c, err := console.New(r.admin, console.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	for _, tt := range []struct{ method, path string }{
		{"GET", "/tasks/a.b:1"},
		{"GET", "/tasks/a%20b:dead:1"},
		{"GET", "/tasks/%3E:1"},
		{"POST", "/actors/a.b/pause"},
		{"POST", "/actors/*/resume"},
		{"POST", "/tasks/a.b:dead:1/replay"},
		{"POST", "/tasks/a.b:1/delete"},
	} {
		req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "invalid stream name") {
			t.Errorf("%s %s: %d, want 404 saying no actor has that name\n%s", tt.method, tt.path, resp.StatusCode, body)
		}
	}
}
