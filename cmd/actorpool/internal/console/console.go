// Package console serves the web console of actorpool's durable actors,
// on PostgreSQL (package pgactor, through Postgres) or on NATS JetStream
// (package jsactor, through package jsconsole):
// the actors with live stats and a depth-over-time chart, their tasks by
// state, one task in full, the dead letters with replay and delete, and
// pause and resume. It is what `actorpool console` serves.
//
// Everything it serves is embedded: its templates, its stylesheet and its
// script; the page fetches nothing from elsewhere. Reads are GET requests
// and never change anything; every change is a POST from one of its forms,
// guarded by net/http.CrossOriginProtection, so that another site's page
// cannot make a browser post to the console, and, when Options.Token is
// set, by the token (see Handler).
package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options configures a Console. The zero value is ready to use.
type Options struct {
	// Token, when set, is required by every write action: as the cookie
	// that the console's login form sets, or as an "Authorization: Bearer"
	// header. The command requires one when it listens on an address other
	// than a loopback one.
	Token string
	// Interval is how often Run samples the actors' depth; 0 means 2s.
	Interval time.Duration
	// Samples is how many samples of each actor the chart keeps; 0 means
	// 150 (five minutes at the default Interval).
	Samples int
	// PageSize is how many tasks a page lists; 0 means 50.
	PageSize int
	// LoopbackOnly refuses, with 403, every request whose Host header
	// names another host than localhost or a loopback address: on a
	// console listening on loopback, it keeps a page of another site that
	// has its name resolve to 127.0.0.1 (DNS rebinding) from reading the
	// console or acting as its own pages. The command sets it when it
	// listens on a loopback address.
	LoopbackOnly bool
	// Logger receives the errors of sampling and of requests; nil
	// discards them.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultInterval = 2 * time.Second
	DefaultSamples  = 150
	DefaultPageSize = 50
	maxPageSize     = 1000
)

//go:embed templates static
var files embed.FS

// A Console is the web console over the actors of one Admin. Serve it with
// Handler, and keep its depth chart fed with Run.
type Console struct {
	admin Admin
	opts  Options
	pages map[string]*template.Template

	mu      sync.Mutex
	samples map[string][]sample // actor → oldest first, at most opts.Samples
}

// New returns a console over admin.
func New(admin Admin, opts Options) (*Console, error) {
	switch {
	case admin == nil:
		return nil, errors.New("console: nil Admin")
	case opts.Interval < 0:
		return nil, fmt.Errorf("console: Interval %v is negative; use 0 for the default %v", opts.Interval, DefaultInterval)
	case opts.Samples < 0:
		return nil, fmt.Errorf("console: Samples %d is negative; use 0 for the default %d", opts.Samples, DefaultSamples)
	case opts.PageSize < 0 || opts.PageSize > maxPageSize:
		return nil, fmt.Errorf("console: PageSize %d is out of range; use 1 to %d, or 0 for the default %d", opts.PageSize, maxPageSize, DefaultPageSize)
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Samples == 0 {
		opts.Samples = DefaultSamples
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Console{admin: admin, opts: opts, pages: pages, samples: make(map[string][]sample)}, nil
}

// Handler returns the console's HTTP handler.
//
// Every unsafe request (POST) is refused with 403 Forbidden, before it
// reaches the Admin, when it comes from another origin (as the browser's
// Sec-Fetch-Site or Origin header says), or when Options.Token is set and
// the request does not carry it.
func (c *Console) Handler() http.Handler {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.actorsPage)
	mux.HandleFunc("GET /tasks", c.tasksPage)
	mux.HandleFunc("GET /tasks/{key}", c.taskPage)
	mux.HandleFunc("GET /login", c.loginPage)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))

	mux.HandleFunc("POST /login", c.login)
	mux.Handle("POST /actors/{actor}/pause", c.write(c.pause))
	mux.Handle("POST /actors/{actor}/resume", c.write(c.resume))
	mux.Handle("POST /tasks/{key}/replay", c.write(c.replay))
	mux.Handle("POST /tasks/{key}/delete", c.write(c.delete))

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, http.StatusForbidden, "cross-origin request refused: the console takes write actions only from its own pages; nothing was changed")
	}))
	var h http.Handler = cop.Handler(mux)
	if c.opts.LoopbackOnly {
		h = c.loopbackHost(h)
	}
	return securityHeaders(h)
}

// loopbackHost refuses the requests whose Host is not a loopback one.
func (c *Console) loopbackHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			c.fail(w, r, http.StatusForbidden, fmt.Sprintf("host %q refused: this console listens on a loopback address and answers only requests for localhost, 127.0.0.1 or [::1]; nothing was changed", r.Host))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// securityHeaders keeps the console's pages out of other sites' frames
// and its resources to its own origin.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}
