package testenv

import (
	"runtime"
	"testing"
	"time"
)

// CheckGoroutines fails t if, once t and its cleanups registered after
// this call have finished, more goroutines run than when it was called.
// Call it first in a test, so its check runs last.
func CheckGoroutines(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		// Goroutines that were told to end may take a moment to
		// return: poll, with a bound.
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines outlived the test (%d before it); all goroutines:\n%s",
					runtime.NumGoroutine()-before, before, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
