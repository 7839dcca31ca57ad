package config

import (
	"time"

	"github.com/actorpool/actorpool"
	"github.com/actorpool/actorpool/actor"
)

// A File is a loaded configuration file: the pools and actors it declares,
// in the order it declares them, with environment overrides applied.
type File struct {
	Path   string
	Pools  []Pool
	Actors []Actor

	// placed holds where each actor's settings are written, by its name,
	// so that ActorProblems can place a backend's findings.
	placed map[string]*entry
}

// Pool returns the pool declared under name, and whether there is one.
func (f *File) Pool(name string) (Pool, bool) {
	for _, p := range f.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return Pool{}, false
}

// Actor returns the actor declared under name, and whether there is one.
func (f *File) Actor(name string) (Actor, bool) {
	for _, a := range f.Actors {
		if a.Name == name {
			return a, true
		}
	}
	return Actor{}, false
}

// A Pool is a pool declared in a file.
type Pool struct {
	Name string
	Line int // where the pool's name is written
	// Config holds the pool's settings, with Name set to the pool's name.
	// It has passed Validate; set Logger and Observer, if wanted, and pass it to
	// actorpool.New.
	Config actorpool.Config
}

// An Actor is an actor declared in a file: the settings of [actor.Config]
// that a file can hold, and the leases of a durable actor. [ActorConfig]
// turns it into an actor.Config; a program that runs it durable maps it
// onto its backend's Config, and can have that Config's Validate placed in
// the file with [File.ActorProblems].
type Actor struct {
	Name string
	Line int // where the actor's name is written

	Workers            int
	MinWorkers         int
	MaxWorkers         int
	KeepAlive          time.Duration
	Capacity           int
	Overflow           actor.Overflow
	MaxAttempts        int
	Backoff            actor.Backoff
	Timeout            time.Duration
	Grace              time.Duration
	DeadLetterRejected bool

	// Lease and Heartbeat are a durable actor's (packages pgactor and
	// jsactor): how long a running task stays taken without a heartbeat,
	// and how often the process renews its tasks' leases. An in-memory
	// actor has no leases, and ActorConfig leaves them out.
	Lease     time.Duration
	Heartbeat time.Duration
}

// ActorConfig returns an actor.Config with the settings of a. The hooks a
// file cannot hold — OnError, DeadLetters, Logger — are nil, so they take
// their defaults unless the caller sets them.
func ActorConfig[T any](a Actor) actor.Config[T] {
	return actor.Config[T]{
		Workers:            a.Workers,
		MinWorkers:         a.MinWorkers,
		MaxWorkers:         a.MaxWorkers,
		KeepAlive:          a.KeepAlive,
		Capacity:           a.Capacity,
		Overflow:           a.Overflow,
		MaxAttempts:        a.MaxAttempts,
		Backoff:            a.Backoff,
		Timeout:            a.Timeout,
		Grace:              a.Grace,
		DeadLetterRejected: a.DeadLetterRejected,
	}
}
