package jsserver

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// syncBuffer is a bytes.Buffer the server's goroutines may log to at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestLogger(t *testing.T) {
	for _, tc := range []struct {
		level     slog.Level
		wantDebug bool
	}{
		{slog.LevelInfo, false},
		{slog.LevelDebug, true},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			leakcheck.Check(t)
			var buf syncBuffer
			s, err := Start(Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))})
			if err != nil {
				t.Fatal(err)
			}
			s.Shutdown()
			out := buf.String()
			// Notices are Info lines.
			if !strings.Contains(out, `level=INFO msg="Server is ready"`) {
				t.Errorf("the log has no Info line %q:\n%s", "Server is ready", out)
			}
			// "Go build" is one of the server's Debugf lines at start.
			if got := strings.Contains(out, `level=DEBUG msg="  Go build:`); got != tc.wantDebug {
				t.Errorf("at level %v the log has debug lines: %v, want %v:\n%s", tc.level, got, tc.wantDebug, out)
			}
		})
	}
}

func TestLoggerFatalf(t *testing.T) {
	for _, log := range []*slog.Logger{nil, slog.New(slog.DiscardHandler)} {
		l := &logger{log: log}
		l.Errorf("not fatal")
		if got := l.fatalLine(); got != "" {
			t.Errorf("after Errorf fatalLine() = %q, want \"\"", got)
		}
		l.Fatalf("first %d", 1)
		l.Fatalf("second %d", 2)
		if got := l.fatalLine(); got != "first 1" {
			t.Errorf("fatalLine() = %q, want the first fatal line %q", got, "first 1")
		}
	}
}
