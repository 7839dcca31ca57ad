package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// pageFiles are the pages and their templates in templates/, each parsed
// with layout.html and actors_live.html.
var pageFiles = map[string]string{
	"actors": "actors.html", "actorsLive": "actors.html", "tasks": "tasks.html",
	"task": "task.html", "login": "login.html", "error": "error.html",
}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"time":     fmtTime,
		"duration": fmtDuration,
		"has":      slices.Contains[[]TaskState],
		// An actor's name may hold any character ('/', '?', '#', '&',
		// '%'...): html/template escapes it for a URL's query, not for
		// its path nor for a URL in a hidden input's value.
		"pathEscape":  url.PathEscape,
		"queryEscape": url.QueryEscape,
	}
	pages := make(map[string]*template.Template, len(pageFiles))
	for name, file := range pageFiles {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/actors_live.html", "templates/"+file)
		if err != nil {
			return nil, fmt.Errorf("console: parse template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// pageData is what every page's template gets.
type pageData struct {
	Title     string
	Backend   Backend
	NeedToken bool // whether write actions need the token
	Data      any
}

// render writes page with data; a page whose name ends in "Live" is
// written without the layout, for the page's script to put in place.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, data pageData) {
	data.Backend = c.admin.Backend()
	data.NeedToken = c.opts.Token != ""
	name := "layout.html"
	if strings.HasSuffix(page, "Live") {
		name = "live"
	}
	var b bytes.Buffer
	if err := c.pages[page].ExecuteTemplate(&b, name, data); err != nil {
		c.opts.Logger.Error("console: render", "page", page, "err", err)
		http.Error(w, "console: cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// fail answers r with status and a page that says msg.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", pageData{Title: http.StatusText(status), Data: struct {
		Status  int
		Message string
	}{status, msg}})
}

// failAdmin answers an error of the Admin: 404 for an actor or task that
// is not there, 500 for the rest.
func (c *Console) failAdmin(w http.ResponseWriter, r *http.Request, what string, err error) {
	if IsNotFound(err) {
		c.fail(w, r, http.StatusNotFound, fmt.Sprintf("%s: %v", what, err))
		return
	}
	c.opts.Logger.Error("console: "+what, "err", err)
	c.fail(w, r, http.StatusInternalServerError, fmt.Sprintf("%s: %v", what, err))
}

// actorRow is one actor on the actors page.
type actorRow struct {
	ActorInfo
	Depth int
	Chart chart
}

// actorsPage lists the actors with their stats and depth; with
// ?live=1, only the part the page's script refreshes.
func (c *Console) actorsPage(w http.ResponseWriter, r *http.Request) {
	live := r.URL.Query().Get("live")
	if live != "" && live != "1" {
		c.fail(w, r, http.StatusBadRequest, fmt.Sprintf("live=%q: use live=1 for the live part of the page, or leave it out", live))
		return
	}
	actors, err := c.admin.Actors(r.Context())
	if err != nil {
		c.failAdmin(w, r, "list the actors", err)
		return
	}
	now := time.Now()
	rows := make([]actorRow, len(actors))
	for i, a := range actors {
		rows[i] = actorRow{ActorInfo: a, Depth: depth(a.Stats), Chart: c.chart(a.Name, now)}
	}
	page := "actors"
	if live == "1" {
		page = "actorsLive"
	}
	c.render(w, r, http.StatusOK, page, pageData{Title: "Actors", Data: struct {
		Actors   []actorRow
		Interval time.Duration
		Window   time.Duration
	}{rows, c.opts.Interval, c.opts.Interval * time.Duration(c.opts.Samples)}})
}

// filterParams are the query parameters of the tasks page.
var filterParams = []string{"actor", "state", "key", "since", "until", "after", "limit"}

// parseFilter reads a task filter from the query q, with a clear error
// naming the parameter that is wrong and what it may be.
func (c *Console) parseFilter(q url.Values) (TaskFilter, error) {
	for p := range q {
		if !slices.Contains(filterParams, p) {
			return TaskFilter{}, fmt.Errorf("unknown parameter %q: the tasks page takes %s", p, strings.Join(filterParams, ", "))
		}
	}
	f := TaskFilter{Actor: q.Get("actor"), Key: q.Get("key"), Limit: c.opts.PageSize}
	states := c.admin.Backend().States
	for _, s := range q["state"] {
		if s == "" {
			continue
		}
		st := TaskState(s)
		if !slices.Contains(states, st) {
			return f, fmt.Errorf("state %q is not a task state here: use %s", s, stateList(states))
		}
		if !slices.Contains(f.States, st) {
			f.States = append(f.States, st)
		}
	}
	var err error
	if f.Since, err = parseTime("since", q.Get("since")); err != nil {
		return f, err
	}
	if f.Until, err = parseTime("until", q.Get("until")); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, fmt.Errorf("since %s is not before until %s: no task could match", q.Get("since"), q.Get("until"))
	}
	if v := q.Get("after"); v != "" {
		if f.After, err = ParseTaskKey(v); err != nil {
			return f, fmt.Errorf("after: %w; use the page's Next link", err)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return f, fmt.Errorf("limit %q is out of range: use a whole number from 1 to %d", v, maxPageSize)
		}
		f.Limit = n
	}
	return f, nil
}

func stateList(states []TaskState) string {
	s := make([]string, len(states))
	for i, st := range states {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

// timeLayouts are the times a filter takes: RFC 3339, and what the page's
// datetime-local inputs send, read as UTC.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q is not a time: write it as 2006-01-02T15:04:05Z (RFC 3339), 2006-01-02T15:04 (UTC) or 2006-01-02", name, v)
}

// tasksPage lists tasks by the filter in its query, a page at a time.
func (c *Console) tasksPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := c.parseFilter(q)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	actors, err := c.admin.Actors(r.Context())
	if err != nil {
		c.failAdmin(w, r, "list the actors", err)
		return
	}
	if f.Actor != "" && !slices.ContainsFunc(actors, func(a ActorInfo) bool { return a.Name == f.Actor }) {
		b := c.admin.Backend()
		c.fail(w, r, http.StatusNotFound, fmt.Sprintf("actor %q: unknown actor in %s %q", f.Actor, b.Scope, b.Name))
		return
	}
	page, err := c.admin.Tasks(r.Context(), f)
	if err != nil {
		c.failAdmin(w, r, "list the tasks", err)
		return
	}
	var next string
	if !page.Next.IsZero() {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("after", page.Next.String())
		next = "/tasks?" + nq.Encode()
	}
	title := "Tasks"
	if slices.Equal(f.States, []TaskState{TaskDead}) {
		title = "Dead letters"
	}
	names := make([]string, len(actors))
	for i, a := range actors {
		names[i] = a.Name
	}
	c.render(w, r, http.StatusOK, "tasks", pageData{Title: title, Data: struct {
		Filter      TaskFilter
		Since       string
		Until       string
		States      []TaskState
		Actors      []string
		Tasks       []TaskInfo
		Next        string
		Here        string
		FirstPage   bool
		FirstPageQS string
	}{
		Filter: f, Since: inputTime(f.Since), Until: inputTime(f.Until), States: c.admin.Backend().States, Actors: names,
		Tasks: page.Tasks, Next: next, Here: r.URL.RequestURI(), FirstPage: f.After.IsZero(),
		FirstPageQS: withoutAfter(q),
	}})
}

func withoutAfter(q url.Values) string {
	c := url.Values{}
	for k, v := range q {
		if k != "after" {
			c[k] = v
		}
	}
	return c.Encode()
}

// parseKey reads the task key in r's path.
func parseKey(r *http.Request) (TaskKey, error) {
	return ParseTaskKey(r.PathValue("key"))
}

// taskPage shows one task in full.
func (c *Console) taskPage(w http.ResponseWriter, r *http.Request) {
	key, err := parseKey(r)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	t, err := c.admin.Task(r.Context(), key)
	if err != nil {
		c.failAdmin(w, r, fmt.Sprintf("task %s", key), err)
		return
	}
	payload, kind := showPayload(t.Payload)
	c.render(w, r, http.StatusOK, "task", pageData{Title: fmt.Sprintf("Task %s", key), Data: struct {
		Task        TaskInfo
		Payload     string
		PayloadKind string
		Here        string
	}{t, payload, kind, r.URL.RequestURI()}})
}

// showPayload returns a payload as the page shows it, and what it is:
// JSON indented, other text as it is, and bytes in hex.
func showPayload(p []byte) (string, string) {
	switch {
	case len(p) == 0:
		return "", "empty"
	case json.Valid(p):
		var b bytes.Buffer
		if json.Indent(&b, p, "", "  ") == nil {
			return b.String(), "JSON"
		}
	case utf8.Valid(p):
		return string(p), "text"
	}
	return fmt.Sprintf("% x", p), fmt.Sprintf("%d bytes, in hex", len(p))
}

// inputTime writes t as the page's datetime-local inputs take it, in UTC.
func inputTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

func fmtDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.Round(time.Millisecond).String()
}

// back is where a write action sends the browser when it is done: the
// local path its form names in "next", or fallback.
func back(r *http.Request, fallback string) string {
	next := r.PostFormValue("next")
	if u, err := url.Parse(next); err == nil && strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") && !strings.HasPrefix(next, "/\\") && u.Host == "" && u.Scheme == "" {
		return next
	}
	return fallback
}

func (c *Console) pause(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("actor")
	if err := c.admin.Pause(r.Context(), name); err != nil {
		c.failAdmin(w, r, fmt.Sprintf("pause actor %q", name), err)
		return
	}
	http.Redirect(w, r, back(r, "/"), http.StatusSeeOther)
}

func (c *Console) resume(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("actor")
	if err := c.admin.Resume(r.Context(), name); err != nil {
		c.failAdmin(w, r, fmt.Sprintf("resume actor %q", name), err)
		return
	}
	http.Redirect(w, r, back(r, "/"), http.StatusSeeOther)
}

func (c *Console) replay(w http.ResponseWriter, r *http.Request) {
	key, err := parseKey(r)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	replayed, ok, err := c.admin.Replay(r.Context(), key)
	switch {
	case err != nil:
		c.failAdmin(w, r, fmt.Sprintf("replay task %s", key), err)
	case !ok:
		c.fail(w, r, http.StatusConflict, fmt.Sprintf("task %s is not a dead letter (replayed or deleted already, or never one): nothing was replayed", key))
	default:
		http.Redirect(w, r, back(r, "/tasks/"+url.PathEscape(replayed.String())), http.StatusSeeOther)
	}
}

func (c *Console) delete(w http.ResponseWriter, r *http.Request) {
	key, err := parseKey(r)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	ok, err := c.admin.Delete(r.Context(), key)
	switch {
	case err != nil:
		c.failAdmin(w, r, fmt.Sprintf("delete task %s", key), err)
	case !ok:
		c.fail(w, r, http.StatusConflict, fmt.Sprintf("task %s was not deleted: only waiting tasks and dead letters are deleted, not running ones, and it may be gone already", key))
	default:
		http.Redirect(w, r, back(r, "/tasks?state=dead"), http.StatusSeeOther)
	}
}
