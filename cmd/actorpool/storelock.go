package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// storeLockName is the file in the embedded JetStream server's store that
// a demo or console locks while it runs the server.
const storeLockName = "actorpool-demo.lock"

// A storeLock is this process's hold on an embedded server's store.
type storeLock struct {
	f *os.File // nil where the store is not locked
}

// A storeHolder is what the holder of a store writes in its lock file,
// for the process that finds the store taken: who runs the server, and
// where a client reaches it.
type storeHolder struct {
	Command string `json:"command"` // "demo" or "console"
	PID     int    `json:"pid"`
	URL     string `json:"url"`
}

// note writes h in the lock file.
func (l *storeLock) note(h storeHolder) error {
	if l.f == nil {
		return nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("note the embedded JetStream server's holder: %w", err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("note the embedded JetStream server's holder: %w", err)
	}
	return nil
}

// unlock gives the store back. The note stays: it is read only while the
// file is locked.
func (l *storeLock) unlock() {
	if l.f != nil {
		l.f.Close()
	}
}

// readHolder reads the note of the lock file f; the zero storeHolder
// when there is none yet, or it cannot be read.
func readHolder(f *os.File) storeHolder {
	var h storeHolder
	if b, err := io.ReadAll(io.LimitReader(f, 4096)); err == nil {
		_ = json.Unmarshal(b, &h)
	}
	return h
}

// A storeBusyError is the error of a store another process holds.
type storeBusyError struct {
	dir    string
	holder storeHolder
}

func (e *storeBusyError) Error() string {
	who := "another actorpool process"
	if e.holder.Command != "" {
		who = fmt.Sprintf("another actorpool %s (pid %d)", e.holder.Command, e.holder.PID)
	}
	at, reach := "", ""
	if e.holder.URL != "" {
		at, reach = " at "+e.holder.URL, ", reach its server with --jetstream="+e.holder.URL
	}
	return fmt.Sprintf("%s runs the embedded JetStream server on %s%s; wait for it to end%s, or give this one a directory of its own with --jetstream-dir", who, e.dir, at, reach)
}
