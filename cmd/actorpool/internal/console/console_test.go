package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// memAdmin is an Admin over tasks in memory, which records every change
// it makes, so that a test can tell that a refused request changed
// nothing. Its keys are IDs alone, as on PostgreSQL.
type memAdmin struct {
	mu      sync.Mutex
	actors  []ActorInfo
	tasks   []TaskInfo // in id order
	changes []string
	reads   int
}

func newMemAdmin() *memAdmin {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	a := &memAdmin{actors: []ActorInfo{
		{Name: "mail", Stats: Stats{Accepted: 10, Completed: 7, DeadLettered: 1, Queued: 2}},
		{Name: "audit", Paused: true, PausedAt: at},
	}}
	for i := range uint64(5) {
		st := TaskQueued
		if i == 2 {
			st = TaskDead
		}
		if i == 3 {
			st = TaskRunning
		}
		a.tasks = append(a.tasks, TaskInfo{Ref: TaskKey{ID: i + 1}, ID: i + 1, Actor: "mail", State: st, Key: fmt.Sprint("k", i),
			Payload: []byte(`{"to":"ann@example.com","n":` + fmt.Sprint(i) + `}`), Enqueued: at.Add(time.Duration(i) * time.Minute)})
	}
	a.tasks[2].Reason, a.tasks[2].LastError = "max attempts", "smtp: 550 no such user"
	return a
}

func (a *memAdmin) Backend() Backend {
	return Backend{Scope: "schema", Name: "jobs", Package: "pgactor", States: pgStates, Priorities: true, Owners: true}
}

func (a *memAdmin) Actors(ctx context.Context) ([]ActorInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	return slices.Clone(a.actors), nil
}

func (a *memAdmin) Task(ctx context.Context, key TaskKey) (TaskInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	for _, t := range a.tasks {
		if t.Ref == key {
			return t, nil
		}
	}
	return TaskInfo{}, NotFound(fmt.Errorf("task %s: no such task", key))
}

func (a *memAdmin) Tasks(ctx context.Context, f TaskFilter) (TaskPage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	var p TaskPage
	for _, t := range a.tasks {
		switch {
		case t.ID <= f.After.ID,
			f.Actor != "" && t.Actor != f.Actor,
			len(f.States) > 0 && !slices.Contains(f.States, t.State),
			f.Key != "" && t.Key != f.Key,
			!f.Since.IsZero() && t.Enqueued.Before(f.Since),
			!f.Until.IsZero() && !t.Enqueued.Before(f.Until):
			continue
		}
		if len(p.Tasks) == f.Limit {
			p.Next = p.Tasks[len(p.Tasks)-1].Ref
			break
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p, nil
}

// move sets the state of the task key names, if it is in a state of from.
func (a *memAdmin) move(what string, key TaskKey, from []TaskState, to TaskState) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, t := range a.tasks {
		if t.Ref == key && slices.Contains(from, t.State) {
			a.tasks[i].State = to
			a.changes = append(a.changes, fmt.Sprintf("%s %s", what, key))
			return true
		}
	}
	return false
}

func (a *memAdmin) Replay(ctx context.Context, key TaskKey) (TaskKey, bool, error) {
	return key, a.move("replay", key, []TaskState{TaskDead}, TaskQueued), nil
}

func (a *memAdmin) Delete(ctx context.Context, key TaskKey) (bool, error) {
	return a.move("delete", key, []TaskState{TaskDead, TaskQueued, TaskScheduled, TaskRetrying}, "deleted"), nil
}

func (a *memAdmin) pauseResume(what, actor string, paused bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.actors {
		if a.actors[i].Name == actor {
			a.actors[i].Paused = paused
			a.changes = append(a.changes, what+" "+actor)
			return nil
		}
	}
	return NotFound(fmt.Errorf("actor %q: unknown actor", actor))
}

func (a *memAdmin) Pause(ctx context.Context, actor string) error {
	return a.pauseResume("pause", actor, true)
}

func (a *memAdmin) Resume(ctx context.Context, actor string) error {
	return a.pauseResume("resume", actor, false)
}

func (a *memAdmin) changed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.changes)
}

// serve returns a test server of a console over a, with opts.
func serve(t *testing.T, a Admin, opts Options) *httptest.Server {
	t.Helper()
	c, err := New(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// response is what a request got.
type response struct {
	status   int
	body     string
	location string
}

// do sends a request as a browser on the console's own page would,
// unless header says otherwise, and follows no redirect.
func do(t *testing.T, srv *httptest.Server, method, path string, form url.Values, header http.Header) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header[k] = v
	}
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, string(body), resp.Header.Get("Location")}
}

// writes are a write action of each kind, each of which changes memAdmin.
var writes = []struct {
	path   string
	change string
}{
	{"/actors/mail/pause", "pause mail"},
	{"/actors/audit/resume", "resume audit"},
	{"/tasks/3/replay", "replay 3"},
	{"/tasks/1/delete", "delete 1"},
}

// TestWriteToken proves that with a token, every write action is refused
// with 403 and a clear message, changing nothing, unless the request
// carries the token: in a header, or in the cookie the login form sets.
func TestWriteToken(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header http.Header
		status int
		want   string
	}{
		{"no token", nil, 403, "this console needs a token for write actions, and the request has none"},
		{"wrong bearer", http.Header{"Authorization": {"Bearer nope"}}, 403, "wrong console token"},
		{"empty bearer", http.Header{"Authorization": {"Bearer "}}, 403, "the request has none"},
		{"basic auth", http.Header{"Authorization": {"Basic czNjcjN0"}}, 403, "the request has none"},
		{"wrong cookie", http.Header{"Cookie": {tokenCookie + "=nope"}}, 403, "wrong console token"},
		{"bearer", http.Header{"Authorization": {"Bearer s3cr3t"}}, 303, ""},
		{"basic auth and cookie", http.Header{"Authorization": {"Basic czNjcjN0"}, "Cookie": {tokenCookie + "=s3cr3t"}}, 303, ""},
		{"wrong bearer, right cookie", http.Header{"Authorization": {"Bearer nope"}, "Cookie": {tokenCookie + "=s3cr3t"}}, 403, "wrong console token"},
		{"cookie", http.Header{"Cookie": {tokenCookie + "=s3cr3t"}}, 303, ""},
	} {
		for _, w := range writes {
			t.Run(tt.name+" "+w.path, func(t *testing.T) {
				a := newMemAdmin()
				srv := serve(t, a, Options{Token: "s3cr3t"})
				r := do(t, srv, "POST", w.path, url.Values{}, tt.header)
				if r.status != tt.status || !strings.Contains(r.body, tt.want) {
					t.Errorf("got %d, want %d with %q\n%s", r.status, tt.status, tt.want, r.body)
				}
				want := []string{w.change}
				if tt.status != 303 {
					want = nil
				}
				if got := a.changed(); !slices.Equal(got, want) {
					t.Errorf("changes %q, want %q", got, want)
				}
			})
		}
	}
}

// TestLogin proves that the login form takes the right token only, and
// sets a cookie that later write actions are let through with.
func TestLogin(t *testing.T) {
	a := newMemAdmin()
	srv := serve(t, a, Options{Token: "s3cr3t"})
	if r := do(t, srv, "POST", "/login", url.Values{"token": {"guess"}}, nil); r.status != 403 || !strings.Contains(r.body, "wrong console token") {
		t.Errorf("wrong token: got %d\n%s", r.status, r.body)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader("token=s3cr3t"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == tokenCookie {
			ck = c
		}
	}
	if resp.StatusCode != 303 || ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: status %d, cookie %+v; want 303 and an HttpOnly, SameSite=Strict cookie", resp.StatusCode, ck)
	}
	r := do(t, srv, "POST", "/actors/mail/pause", url.Values{}, http.Header{"Cookie": {ck.String()}})
	if r.status != 303 || !slices.Equal(a.changed(), []string{"pause mail"}) {
		t.Errorf("pause with the login's cookie: %d, changes %q\n%s", r.status, a.changed(), r.body)
	}

	open := serve(t, newMemAdmin(), Options{})
	if r := do(t, open, "POST", "/login", url.Values{"token": {"x"}}, nil); r.status != 400 || !strings.Contains(r.body, "this console takes no token") {
		t.Errorf("login to a console without a token: %d\n%s", r.status, r.body)
	}
}

// TestCrossOrigin proves that a write action that a page of another
// origin makes the browser send is refused with 403, changing nothing,
// with or without a token, and that the console's own pages' are not.
func TestCrossOrigin(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"cross-site", http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403},
		{"same-site", http.Header{"Sec-Fetch-Site": {"same-site"}}, 403},
		{"foreign origin", http.Header{"Sec-Fetch-Site": nil, "Origin": {"http://evil.example"}}, 403},
		{"same origin", http.Header{"Sec-Fetch-Site": {"same-origin"}}, 303},
		{"typed by hand", http.Header{"Sec-Fetch-Site": {"none"}}, 303},
		{"not a browser", http.Header{"Sec-Fetch-Site": nil}, 303},
	} {
		for _, token := range []string{"", "s3cr3t"} {
			for _, w := range writes {
				t.Run(fmt.Sprintf("%s token %q %s", tt.name, token, w.path), func(t *testing.T) {
					a := newMemAdmin()
					srv := serve(t, a, Options{Token: token})
					h := tt.header.Clone()
					if token != "" {
						h.Set("Authorization", "Bearer "+token)
					}
					r := do(t, srv, "POST", w.path, url.Values{}, h)
					if r.status != tt.status {
						t.Errorf("got %d, want %d\n%s", r.status, tt.status, r.body)
					}
					if tt.status == 403 && !strings.Contains(r.body, "cross-origin request refused") {
						t.Errorf("403 without saying why:\n%s", r.body)
					}
					want := []string{w.change}
					if tt.status != 303 {
						want = nil
					}
					if got := a.changed(); !slices.Equal(got, want) {
						t.Errorf("changes %q, want %q", got, want)
					}
				})
			}
		}
	}
}

// TestLoopbackOnly proves that a console for loopback refuses, with 403
// and changing nothing, a request for another host, as a page of a site
// whose name was made to resolve to 127.0.0.1 sends; and answers the
// loopback names.
func TestLoopbackOnly(t *testing.T) {
	for _, tt := range []struct {
		host   string
		status int
	}{
		{"evil.example", 403}, {"evil.example:8080", 403}, {"127.0.0.1.evil.example", 403}, {"10.0.0.1:8080", 403},
		{"localhost:8080", 303}, {"127.0.0.1:8080", 303}, {"127.0.0.2", 303}, {"[::1]:8080", 303},
	} {
		a := newMemAdmin()
		srv := serve(t, a, Options{LoopbackOnly: true})
		req, _ := http.NewRequest("POST", srv.URL+"/actors/mail/pause", nil)
		req.Host = tt.host
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		client := *srv.Client()
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("Host %q: %d, want %d\n%s", tt.host, resp.StatusCode, tt.status, body)
		}
		if tt.status == 403 {
			if !strings.Contains(string(body), "answers only requests for localhost") {
				t.Errorf("Host %q: 403 without saying why\n%s", tt.host, body)
			}
			if got := a.changed(); len(got) != 0 {
				t.Errorf("Host %q: a refused request changed %q", tt.host, got)
			}
		}
		req, _ = http.NewRequest("GET", srv.URL+"/", nil)
		req.Host = tt.host
		resp, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{true: 403, false: 200}[tt.status == 403]; resp.StatusCode != want {
			t.Errorf("GET with Host %q: %d, want %d", tt.host, resp.StatusCode, want)
		}
	}
}

// TestGetChangesNothing proves that no GET, of any page or of a write
// action's path, changes anything, and that write paths answer GET with
// 405.
func TestGetChangesNothing(t *testing.T) {
	a := newMemAdmin()
	srv := serve(t, a, Options{})
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/", 200}, {"/?live=1", 200}, {"/tasks", 200}, {"/tasks?state=dead", 200},
		{"/tasks/3", 200}, {"/tasks/1", 200}, {"/login", 200}, {"/static/console.css", 200}, {"/static/console.js", 200},
		{"/actors/mail/pause", 405}, {"/actors/audit/resume", 405}, {"/tasks/3/replay", 405}, {"/tasks/1/delete", 405},
		{"/tasks/3/replay?next=/", 405}, {"/nowhere", 404},
	} {
		r := do(t, srv, "GET", tt.path, nil, nil)
		if r.status != tt.status {
			t.Errorf("GET %s: %d, want %d\n%s", tt.path, r.status, tt.status, r.body)
		}
	}
	if got := a.changed(); len(got) != 0 {
		t.Errorf("GET requests changed %q", got)
	}
}

// TestBadInput proves that a bad id, filter or parameter is answered with
// 400 and a message that names what was wrong and what is allowed, and
// changes nothing; and that what is not there is 404, and a task in the
// wrong state for the action 409.
func TestBadInput(t *testing.T) {
	for _, tt := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", "/tasks/abc", 400, `task &#34;abc&#34; is not a task key: its id &#34;abc&#34; must be a whole number 1 or more, as in 42, mail:42 or mail:dead:42`},
		{"GET", "/tasks/0", 400, "must be a whole number 1 or more"},
		{"GET", "/tasks/-1", 400, "is not a task key"},
		{"GET", "/tasks/18446744073709551616", 400, "is not a task key"},
		{"GET", "/tasks/:3", 400, "is not a task key: write an id (42), or an actor and an id"},
		{"GET", "/tasks/a:b:3", 400, "is not a task key"},
		{"GET", "/tasks/mail:3", 404, "task mail:3"},
		{"GET", "/tasks?state=done", 400, `state &#34;done&#34; is not a task state here: use queued, scheduled, retrying, running, canceling, dead`},
		{"GET", "/tasks?since=yesterday", 400, `since &#34;yesterday&#34; is not a time: write it as 2006-01-02T15:04:05Z`},
		{"GET", "/tasks?until=2026-13-01", 400, `until &#34;2026-13-01&#34; is not a time`},
		{"GET", "/tasks?since=2026-11-27&until=2026-11-26", 400, "is not before until"},
		{"GET", "/tasks?after=x", 400, `after: task &#34;x&#34; is not a task key`},
		{"GET", "/tasks?limit=0", 400, "limit &#34;0&#34; is out of range: use a whole number from 1 to 1000"},
		{"GET", "/tasks?limit=1001", 400, "out of range"},
		{"GET", "/tasks?stat=dead", 400, `unknown parameter &#34;stat&#34;: the tasks page takes actor, state, key, since, until, after, limit`},
		{"GET", "/?live=2", 400, "use live=1"},
		{"GET", "/tasks?actor=nobody", 404, `actor &#34;nobody&#34;`},
		{"GET", "/tasks/99", 404, "task 99"},
		{"POST", "/tasks/abc/replay", 400, "is not a task key"},
		{"POST", "/tasks/0/delete", 400, "is not a task key"},
		{"POST", "/tasks/99/replay", 409, "task 99 is not a dead letter"},
		{"POST", "/tasks/1/replay", 409, "task 1 is not a dead letter"},
		{"POST", "/tasks/4/delete", 409, "task 4 was not deleted: only waiting tasks and dead letters are deleted"},
		{"POST", "/actors/nobody/pause", 404, `pause actor &#34;nobody&#34;`},
		{"POST", "/actors/nobody/resume", 404, `resume actor &#34;nobody&#34;`},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			a := newMemAdmin()
			srv := serve(t, a, Options{})
			var form url.Values
			if tt.method == "POST" {
				form = url.Values{}
			}
			r := do(t, srv, tt.method, tt.path, form, nil)
			if r.status != tt.status || !strings.Contains(r.body, tt.want) {
				t.Errorf("got %d, want %d with %q\n%s", r.status, tt.status, tt.want, r.body)
			}
			if got := a.changed(); len(got) != 0 {
				t.Errorf("a refused request changed %q", got)
			}
		})
	}
}

// TestWriteRedirect proves that a write action sends the browser back to
// the local page its form names, and never to another site.
func TestWriteRedirect(t *testing.T) {
	for _, tt := range []struct{ next, want string }{
		{"/tasks?state=dead", "/tasks?state=dead"},
		{"", "/"},
		{"//evil.example/x", "/"},
		{"/\\evil.example", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
	} {
		a := newMemAdmin()
		srv := serve(t, a, Options{})
		r := do(t, srv, "POST", "/actors/mail/pause", url.Values{"next": {tt.next}}, nil)
		if r.status != 303 || r.location != tt.want {
			t.Errorf("next %q: %d to %q, want 303 to %q", tt.next, r.status, r.location, tt.want)
		}
	}
}

// TestPages proves that the pages show what the Admin has: the actors
// with their stats and state, a task in full with its JSON payload
// indented, the dead letters with their replay button, and pages of tasks
// linked by their cursor.
func TestPages(t *testing.T) {
	a := newMemAdmin()
	srv := serve(t, a, Options{PageSize: 2})
	for _, tt := range []struct {
		path string
		want []string
		not  []string
	}{
		{"/", []string{`id="actor-mail"`, `<td class="completed">7</td>`, `<td class="accepted">10</td>`, `action="/actors/mail/pause"`,
			`action="/actors/audit/resume"`, `paused since 2026-11-26 12:00:00.000 UTC`, "schema <code>jobs</code>"}, nil},
		{"/?live=1", []string{`id="actor-mail"`, `<td class="completed">7</td>`}, []string{"<html"}},
		{"/tasks/3", []string{`<span class="badge dead" id="task-state">dead</span>`, "max attempts", "smtp: 550 no such user",
			"{\n  &#34;to&#34;: &#34;ann@example.com&#34;,\n  &#34;n&#34;: 2\n}", `action="/tasks/3/replay"`, "(JSON)"}, nil},
		{"/tasks/4", []string{"running"}, []string{"/tasks/4/delete", "/tasks/4/replay"}},
		{"/tasks?state=dead", []string{"<h1>Dead letters</h1>", `id="task-3"`, `action="/tasks/3/replay"`}, []string{`id="task-1"`}},
		{"/tasks?actor=mail", []string{`id="task-1"`, `id="task-2"`, `href="/tasks?actor=mail&amp;after=2"`}, []string{`id="task-3"`, "First page"}},
		{"/tasks?actor=mail&after=2", []string{`id="task-3"`, `id="task-4"`, "after=4", "First page"}, []string{`id="task-2"`}},
		{"/tasks?key=k4", []string{`id="task-5"`}, []string{`id="task-4"`, "Next page"}},
		{"/tasks?since=2026-11-26T12:01&until=2026-11-26T13:03:00%2B01:00", []string{`id="task-2"`, `id="task-3"`,
			`name="since" value="2026-11-26T12:01:00"`, `name="until" value="2026-11-26T12:03:00"`}, []string{`id="task-1"`, `id="task-4"`}},
	} {
		r := do(t, srv, "GET", tt.path, nil, nil)
		if r.status != 200 {
			t.Errorf("GET %s: %d\n%s", tt.path, r.status, r.body)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("GET %s lacks %q\n%s", tt.path, w, r.body)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(r.body, w) {
				t.Errorf("GET %s has %q\n%s", tt.path, w, r.body)
			}
		}
	}
}

// TestShowPayload proves that a payload is shown indented when JSON, as
// it is when other text, and in hex otherwise.
func TestShowPayload(t *testing.T) {
	for _, tt := range []struct {
		in         string
		want, kind string
	}{
		{`{"a":[1,2]}`, "{\n  \"a\": [\n    1,\n    2\n  ]\n}", "JSON"},
		{"plain words", "plain words", "text"},
		{"\xff\x00", "ff 00", "2 bytes, in hex"},
		{"", "", "empty"},
	} {
		got, kind := showPayload([]byte(tt.in))
		if got != tt.want || kind != tt.kind {
			t.Errorf("showPayload(%q) = %q, %q; want %q, %q", tt.in, got, kind, tt.want, tt.kind)
		}
	}
}

// TestNew proves that options out of range are refused by name.
func TestNew(t *testing.T) {
	for _, tt := range []struct {
		admin Admin
		opts  Options
		want  string
	}{
		{nil, Options{}, "nil Admin"},
		{newMemAdmin(), Options{Interval: -1}, "Interval -1ns is negative"},
		{newMemAdmin(), Options{Samples: -1}, "Samples -1 is negative"},
		{newMemAdmin(), Options{PageSize: 1001}, "PageSize 1001 is out of range"},
	} {
		if _, err := New(tt.admin, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v): %v, want an error with %q", tt.opts, err, tt.want)
		}
	}
}
