//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package actor

import "os"

// lockFile does nothing where flock(2) is missing: there, keeping to one
// FileSink per file is the user's to do.
func lockFile(*os.File) error { return nil }
