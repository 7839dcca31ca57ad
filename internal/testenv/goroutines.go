package testenv

import (
	"testing"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// CheckGoroutines fails t if a goroutine started after this call still
// runs once t and its cleanups registered after this call have finished.
// Call it first in a test, so its check runs last. It is leakcheck.Check,
// the module's one goroutine-leak check, under the name the adapters'
// tests know.
func CheckGoroutines(t testing.TB) {
	t.Helper()
	leakcheck.Check(t)
}
