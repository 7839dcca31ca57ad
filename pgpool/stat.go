package pgpool

import (
	"time"

	"github.com/actorpool/actorpool"
)

// Stat is a snapshot of a pool's gauges and counters, with pgxpool's
// getters. Pool.Stats returns more: every counter of actorpool.Stats.
type Stat struct {
	s             actorpool.Stats
	canceledEarly int64 // takes on a context that had already ended
	idleSweeps    int64 // connections taken by AcquireAllIdle
	emptyFailed   int64 // takes that found no idle connection and failed
}

// AcquireCount returns the number of takes that got a connection.
// AcquireAllIdle's are not counted, as pgxpool does not count them.
func (s *Stat) AcquireCount() int64 { return s.s.Acquires - s.idleSweeps }

// AcquireDuration returns the total time takes spent waiting for a
// connection. A take that found one idle waits no time and reads no clock.
func (s *Stat) AcquireDuration() time.Duration { return s.s.WaitDuration }

// AcquiredConns returns the number of connections lent out.
func (s *Stat) AcquiredConns() int32 { return int32(s.s.InUse) }

// CanceledAcquireCount returns the number of takes that ended because
// their context did, canceled or past its deadline.
func (s *Stat) CanceledAcquireCount() int64 {
	return s.s.CanceledAcquires + s.s.TimedOutAcquires + s.canceledEarly
}

// ConstructingConns returns the number of connections being made.
func (s *Stat) ConstructingConns() int32 { return int32(s.s.Creating) }

// EmptyAcquireCount returns the number of takes that found no idle
// connection and got one, waiting or connecting; takes that failed are not
// counted, as pgxpool does not count them.
func (s *Stat) EmptyAcquireCount() int64 { return s.s.EmptyAcquires - s.emptyFailed }

// EmptyAcquireWaitTime returns the total time takes that found no idle
// connection spent waiting for one.
func (s *Stat) EmptyAcquireWaitTime() time.Duration { return s.s.WaitDuration }

// IdleConns returns the number of idle connections, those the health
// check is pinging included.
func (s *Stat) IdleConns() int32 { return int32(s.s.Idle + s.s.Reserved - s.s.Destroying) }

// MaxConns returns the most connections the pool may hold.
func (s *Stat) MaxConns() int32 { return int32(s.s.MaxObjects) }

// TotalConns returns the number of connections open or being made: idle,
// lent out, or being made. Connections being closed are not counted.
func (s *Stat) TotalConns() int32 {
	return int32(s.s.Idle + s.s.InUse + s.s.Creating + s.s.Reserved - s.s.Destroying)
}

// NewConnsCount returns the number of connects started.
func (s *Stat) NewConnsCount() int64 { return s.s.CreateAttempts }

// MaxLifetimeDestroyCount returns the number of connections closed for
// having outlived MaxConnLifetime.
func (s *Stat) MaxLifetimeDestroyCount() int64 { return s.s.DestroyedBy.Lifetime }

// MaxIdleDestroyCount returns the number of connections closed for having
// sat idle past MaxConnIdleTime.
func (s *Stat) MaxIdleDestroyCount() int64 { return s.s.DestroyedBy.Idle }
