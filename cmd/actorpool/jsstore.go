package main

import (
	"fmt"
	"os"

	"github.com/actorpool/actorpool/jsactor/jsserver"
)

// An embeddedJetStream is the embedded NATS server that `demo --jetstream`
// and `console --jetstream` run on a store kept between runs, which it
// holds locked while it runs.
type embeddedJetStream struct {
	server *jsserver.Server
	lock   *storeLock
	dir    string
}

// startEmbeddedJetStream starts the embedded server on the store in dir,
// defaultJetStreamDir when "", for the command cmd ("demo", "console"),
// which it notes in the store's lock with the server's URL, so that
// another command finding the store taken can say where the server is.
func startEmbeddedJetStream(dir, cmd string) (_ *embeddedJetStream, err error) {
	if dir == "" {
		if dir, err = defaultJetStreamDir(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot make the embedded JetStream server's store: %w", err)
	}
	lock, err := lockStore(dir)
	if err != nil {
		return nil, err
	}
	srv, err := jsserver.Start(jsserver.Options{Dir: dir})
	if err != nil {
		lock.unlock()
		return nil, fmt.Errorf("cannot start the embedded JetStream server in %s: %w; is another demo or console using it? Name another with --jetstream-dir", dir, err)
	}
	e := &embeddedJetStream{server: srv, lock: lock, dir: dir}
	if err := lock.note(storeHolder{Command: cmd, PID: os.Getpid(), URL: srv.ClientURL()}); err != nil {
		e.shutdown()
		return nil, err
	}
	return e, nil
}

// url is where clients reach the server.
func (e *embeddedJetStream) url() string { return e.server.ClientURL() }

// describe names the server and its store, to be shown.
func (e *embeddedJetStream) describe() string {
	return "an embedded NATS server, stored in " + e.dir
}

// shutdown stops the server and gives its store back.
func (e *embeddedJetStream) shutdown() {
	e.server.Shutdown()
	e.lock.unlock()
}
