package console

import (
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// formOf returns the action and the hidden "next" of the first form in
// body whose action ends in suffix, as a browser would read them.
func formOf(t *testing.T, body, suffix string) (action, next string) {
	t.Helper()
	m := regexp.MustCompile(`<form method="post" action="([^"]*` + regexp.QuoteMeta(suffix) + `)">(?:<input type="hidden" name="next" value="([^"]*)">)?`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form with an action ending in %q\n%s", suffix, body)
	}
	return html.UnescapeString(m[1]), html.UnescapeString(m[2])
}

// TestActorNamesInURLs proves that the pages' forms and links work for an
// actor whose name holds characters that mean something in a URL, as
// pgactor allows any UTF-8 name: its Pause button pauses it, and a
// replayed dead letter's form sends the browser back to that actor's
// dead letters.
func TestActorNamesInURLs(t *testing.T) {
	for _, name := range []string{"orders/eu", "r&d?#1", "50% off", "c++"} {
		t.Run(name, func(t *testing.T) {
			a := newMemAdmin()
			a.actors = append(a.actors, ActorInfo{Name: name})
			a.tasks = append(a.tasks, TaskInfo{Ref: TaskKey{ID: 6}, ID: 6, Actor: name, State: TaskDead,
				Enqueued: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)})
			srv := serve(t, a, Options{})

			r := do(t, srv, "GET", "/", nil, nil)
			var action string
			for _, sec := range strings.Split(r.body, `<section class="actor"`)[1:] {
				if m := regexp.MustCompile(`data-actor="([^"]*)"`).FindStringSubmatch(sec); m != nil && html.UnescapeString(m[1]) == name {
					action, _ = formOf(t, sec, "/pause")
				}
			}
			if action == "" {
				t.Fatalf("no section of actor %q\n%s", name, r.body)
			}
			if r := do(t, srv, "POST", action, url.Values{}, nil); r.status != 303 {
				t.Errorf("POST %s, the Pause button of actor %q: %d, want 303\n%s", action, name, r.status, r.body)
			}
			if got, want := a.changed(), []string{"pause " + name}; !slices.Equal(got, want) {
				t.Errorf("the Pause button of actor %q made changes %q, want %q", name, got, want)
			}

			r = do(t, srv, "GET", "/tasks/6", nil, nil)
			action, next := formOf(t, r.body, "/replay")
			r = do(t, srv, "POST", action, url.Values{"next": {next}}, nil)
			if r.status != 303 {
				t.Fatalf("POST %s: %d, want 303\n%s", action, r.status, r.body)
			}
			u, err := url.Parse(r.location)
			if err != nil || u.Query().Get("actor") != name || u.Query().Get("state") != "dead" {
				t.Errorf("replay sent the browser to %q, want the dead letters of actor %q", r.location, name)
			}
			if got := do(t, srv, "GET", r.location, nil, nil); got.status != 200 {
				t.Errorf("GET %s, where replay sent the browser: %d, want 200", r.location, got.status)
			}
		})
	}
}
