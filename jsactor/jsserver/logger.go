package jsserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
)

// levelTrace is the slog level of the server's trace lines: below Debug,
// because they log every protocol message and drown everything else.
const levelTrace = slog.LevelDebug - 4

// logger adapts a *slog.Logger to server.Logger. It is installed even
// when no slog.Logger is given, because it is how Start learns why the
// server failed: the server reports failures to start through Fatalf and
// returns, and its own Fatalf would exit the process.
type logger struct {
	log *slog.Logger // nil: lines are dropped

	mu    sync.Mutex
	fatal string // the first Fatalf line
}

var _ server.Logger = (*logger)(nil)

func (l *logger) Noticef(format string, v ...any) { l.emit(slog.LevelInfo, format, v) }
func (l *logger) Warnf(format string, v ...any)   { l.emit(slog.LevelWarn, format, v) }
func (l *logger) Errorf(format string, v ...any)  { l.emit(slog.LevelError, format, v) }
func (l *logger) Debugf(format string, v ...any)  { l.emit(slog.LevelDebug, format, v) }
func (l *logger) Tracef(format string, v ...any)  { l.emit(levelTrace, format, v) }

// Fatalf records the first fatal line for Start and logs it as an error;
// it does not exit, the server returns from what failed on its own.
func (l *logger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.mu.Lock()
	if l.fatal == "" {
		l.fatal = msg
	}
	l.mu.Unlock()
	if l.log != nil {
		l.log.Error(msg, "fatal", true)
	}
}

// fatalLine returns the first line the server logged through Fatalf, or "".
func (l *logger) fatalLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}

func (l *logger) emit(level slog.Level, format string, v []any) {
	if l.log == nil || !l.log.Enabled(context.Background(), level) {
		return
	}
	l.log.Log(context.Background(), level, fmt.Sprintf(format, v...))
}

// levels reports whether the server should produce debug and trace lines
// at all: formatting them is costly, so only when l would keep them.
func (l *logger) levels() (debug, trace bool) {
	if l.log == nil {
		return false, false
	}
	ctx := context.Background()
	return l.log.Enabled(ctx, slog.LevelDebug), l.log.Enabled(ctx, levelTrace)
}
