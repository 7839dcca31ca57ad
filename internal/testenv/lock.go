package testenv

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// go test runs the packages of ./... in parallel, as separate processes,
// and a fault test that stops a shared server would break a test of
// another package that uses it at that moment. So every test that asks for
// a server with Postgres or Redis holds a shared lock on it, across
// processes, until it ends; StopPostgres and StopRedis take the lock for
// themselves alone, waiting for the others' tests to end, and hold it
// until their own test ends, by when the server runs again.

// lockWait bounds how long a test waits for a server's lock.
const lockWait = 5 * time.Minute

var (
	locksMu sync.Mutex
	locks   = map[lockKey]*os.File{}
)

type lockKey struct {
	t      testing.TB
	server string
}

// share holds server's lock, shared, until t ends.
func share(t testing.TB, server string) {
	t.Helper()
	k := lockKey{t, server}
	locksMu.Lock()
	_, held := locks[k]
	locksMu.Unlock()
	if held {
		return
	}
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "actorpool-"+server+".lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("lock for %s: %v", server, err)
	}
	if err := lockFile(f, false, lockWait); err != nil {
		f.Close()
		t.Fatalf("waiting for the %s server's lock (another package's fault test stops it): %v", server, err)
	}
	locksMu.Lock()
	locks[k] = f
	locksMu.Unlock()
	t.Cleanup(func() {
		locksMu.Lock()
		delete(locks, k)
		locksMu.Unlock()
		f.Close() // releases the lock
	})
}

// exclusive turns t's shared hold on server's lock into an exclusive one,
// waiting for every other holder to let go.
func exclusive(t testing.TB, server string) {
	t.Helper()
	share(t, server)
	locksMu.Lock()
	f := locks[lockKey{t, server}]
	locksMu.Unlock()
	if err := lockFile(f, true, lockWait); err != nil {
		t.Fatalf("waiting for other tests to stop using the %s server: %v", server, err)
	}
}
