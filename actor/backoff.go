package actor

import "time"

// Delay returns how long a task waits after its failed attempt (from 1)
// before the next: Initial×Multiplierᵃᵗᵗᵉᵐᵖᵗ⁻¹ capped at Max, spread by
// ±Jitter of itself, with r, drawn uniformly from [0, 1), choosing where in
// the spread. Zero fields take their defaults. It is the delay an actor
// uses, for other executors of the same handlers, such as a durable actor.
func (b Backoff) Delay(attempt int, r float64) time.Duration {
	return b.withDefaults().delay(max(attempt, 1), r)
}

// withDefaults returns b with its zero fields set to their defaults.
func (b Backoff) withDefaults() Backoff {
	if b.Initial == 0 {
		b.Initial = defaultInitial
	}
	if b.Max == 0 {
		b.Max = max(defaultMaxDelay, b.Initial)
	}
	if b.Multiplier == 0 {
		b.Multiplier = defaultMultiplier
	}
	return b
}
