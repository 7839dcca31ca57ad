package main

import (
	"context"
	"time"

	"github.com/actorpool/actorpool"
)

// A backend is the server the demo loads: two pools of connections to it,
// one for the clients' requests and one for the audit actor's writes, so
// that background work cannot starve requests of connections.
type backend interface {
	// describe names the server, such as "embedded Redis at 127.0.0.1:40123".
	describe() string
	// scratch names what the run writes on the server and close removes,
	// such as "keys actorpool-demo:3f9a0c1b22d4:*", or is "" when nothing
	// outlives the run (an embedded server): a run that was killed leaves
	// it behind, and the header says what to look for.
	scratch() string
	// request runs one client request on a connection of the request pool,
	// and sets r.got to when the connection was in hand.
	request(ctx context.Context, r *request) error
	// audit writes one audit record through the audit pool.
	audit(ctx context.Context, e auditEvent) error
	// stats returns the request pool's and the audit pool's Stats.
	stats() (requests, audit actorpool.Stats)
	// close closes both pools, waiting for their objects until ctx ends,
	// removes what the demo wrote, and stops an embedded server.
	close(ctx context.Context) error
}

// A request is one client request: who made it, and its timings.
type request struct {
	client, user, page int
	start, got         time.Time
}

// An auditEvent is the payload of the audit task each request sends.
type auditEvent struct {
	Client int       `json:"client"`
	User   int       `json:"user"`
	Page   int       `json:"page"`
	At     time.Time `json:"at"`
}

// Sizes of the demo's data: users with sessions, pages viewed.
const (
	numUsers = 10000
	numPages = 100
)

// pingTimeout bounds the first contact with a server.
const pingTimeout = 5 * time.Second
