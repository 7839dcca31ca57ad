package testenv

import (
	"context"
	"testing"
	"time"
)

// CloseAtEnd has t close a pool when it ends: it calls close, a pool's
// Close or Shutdown, with a context that ends after within, and fails t
// with the error close returns.
func CloseAtEnd(t testing.TB, within time.Duration, close func(context.Context) error) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		if err := close(ctx); err != nil {
			t.Errorf("close at the end of the test: %v", err)
		}
	})
}
