package actor

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A LogSink logs dead letters through slog at error level, at most burst at
// once and one per interval after that, so that a flood of failures cannot
// flood the log too. It counts the letters it leaves out and reports that
// count on the next letter it logs.
//
// The payload is logged with slog.Any; a payload type that holds secrets
// should implement slog.LogValuer.
type LogSink[T any] struct {
	log   *slog.Logger
	every time.Duration
	burst float64

	mu         sync.Mutex
	tokens     float64
	last       time.Time // when tokens were last counted
	held       uint64    // letters left out since the last one logged
	suppressed uint64    // letters left out in all
}

// NewLogSink returns a sink that logs through logger (nil means
// slog.Default()), at most burst letters at once and then one per every.
// every ≤ 0 means no limit.
func NewLogSink[T any](logger *slog.Logger, every time.Duration, burst int) *LogSink[T] {
	if logger == nil {
		logger = slog.Default()
	}
	b := float64(max(burst, 1))
	return &LogSink[T]{log: logger, every: every, burst: b, tokens: b}
}

// Put logs l unless the rate limit leaves it out. It never fails.
func (s *LogSink[T]) Put(l DeadLetter[T]) error {
	now := time.Now()
	s.mu.Lock()
	if s.every > 0 {
		if !s.last.IsZero() {
			s.tokens = min(s.burst, s.tokens+float64(now.Sub(s.last))/float64(s.every))
		}
		s.last = now
		if s.tokens < 1 {
			s.held++
			s.suppressed++
			s.mu.Unlock()
			return nil
		}
		s.tokens--
	}
	held := s.held
	s.held = 0
	s.mu.Unlock()

	attrs := l.attrs(1)
	if held > 0 {
		attrs = append(attrs, slog.Uint64("suppressed", held))
	}
	s.log.LogAttrs(context.Background(), slog.LevelError, "actor: dead letter", attrs...)
	return nil
}

// Suppressed returns how many letters the rate limit has left out of the log.
func (s *LogSink[T]) Suppressed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suppressed
}
