package actor

import (
	"errors"
	"fmt"
	"os"
)

// errLocked is why a second FileSink cannot open a file.
var errLocked = errors.New("the file is open in another FileSink, in this process or another: a file takes one FileSink at a time, since a replay rewrites it; share one")

// openLocked opens the dead-letter file at path, creating it if need be,
// and locks it for this sink (see lockFile).
func openLocked(path string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		// A replay's rewrite may have replaced the file between the open
		// and the lock: then the lock is on the file replaced, and writing
		// there would lose the letters.
		if same, err := isFileAt(f, path); err != nil || same {
			if err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("%s: the file was replaced ten times while it was being opened", path)
}

// isFileAt reports whether f is the file at path.
func isFileAt(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}
