//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package actor

import "os"

// fileLocking says that a second FileSink of a file is refused.
const fileLocking = false

// lockFile does nothing where flock(2) is missing: there, keeping to one
// FileSink per file is the user's to do.
func lockFile(*os.File) error { return nil }
