//go:build !unix

package testenv

import (
	"os"
	"time"
)

// lockFile does nothing where flock is missing; the fault tests that stop
// servers run only where servers are controlled, on Linux.
func lockFile(f *os.File, exclusive bool, limit time.Duration) error { return nil }
