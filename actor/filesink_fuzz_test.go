package actor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzFileSink reads a dead-letter file of any content, then moves every
// letter out of it. Each line is a letter, a moved record, a line a record
// hides, or a *LineError that names it and holds its bytes; the move
// offers the letters the reading yielded, and leaves the file holding
// exactly the lines that hold no letter, in their order.
func FuzzFileSink(f *testing.F) {
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(t.TempDir(), "dead.jsonl")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenFileSink[fuzzPayload](path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		opened, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(opened) > 0 && opened[len(opened)-1] != '\n' {
			t.Fatalf("OpenFileSink left the last line without its newline: %q", opened)
		}
		lines := strings.Split(string(opened), "\n")
		lines = lines[:len(lines)-1]

		letters, bad := readAll(t, s)
		if len(letters)+len(bad) > len(lines) {
			t.Fatalf("%d letters and %d line errors from %d lines", len(letters), len(bad), len(lines))
		}
		for i, le := range bad {
			if le.Line < 1 || le.Line > len(lines) || (i > 0 && le.Line <= bad[i-1].Line) {
				t.Fatalf("line error for line %d of %d, after line %d", le.Line, len(lines), bad[max(i-1, 0)].Line)
			}
			if raw := lines[le.Line-1]; string(le.Raw) != raw {
				t.Errorf("line %d: Raw %q, want the line, %q", le.Line, le.Raw, raw)
			}
			if le.Err == nil || le.Err.Error() == "" || !strings.Contains(le.Error(), fmt.Sprintf("%s:%d", path, le.Line)) {
				t.Errorf("line error %q names neither the place nor the fault", le.Error())
			}
		}

		var moved []fuzzPayload
		err = s.Move(func(l DeadLetter[fuzzPayload], err error) (bool, error) {
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("Move offered %v", err)
			}
			if err == nil {
				moved = append(moved, l.Task.Payload)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(moved, letters, fuzzPayload.equal) {
			t.Errorf("Move offered %v, but Letters yielded %v", moved, letters)
		}
		var want bytes.Buffer
		for _, le := range bad {
			want.Write(le.Raw)
			want.WriteByte('\n')
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, want.Bytes()) {
			t.Errorf("after moving every letter the file holds\n%q\nwant the lines that hold none:\n%q", after, want.Bytes())
		}
	})
}
