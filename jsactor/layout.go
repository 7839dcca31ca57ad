package jsactor

import (
	"crypto/sha256"
	"encoding/hex"
)

// A layout names the streams, subjects and consumers of one actor; see
// the package documentation's Layout.
type layout struct {
	prefix, actor string
}

// Where a task's message waits, as the third token of its subject.
const (
	placeReady   = "r" // for a worker
	placeDelayed = "d" // sent to run later, or snoozed, until due
	placeBackoff = "b" // a failed attempt's retry, until due
)

// noKey is the last token of the subject of a task without a unique key.
const noKey = "_"

// The consumers of the work stream.
const (
	consumerRun     = "run"
	consumerDelayed = "delayed"
	consumerBackoff = "backoff"
)

// A counter is one of the counters kept in the counter stream.
type counter int

// The counters, in the order of counterNames.
const (
	countAccepted counter = iota
	countCompleted
	countDeadLettered
	countFailed
	countRetried
	countLost
	countReplayed
)

// counterNames are the counters' subject tokens, by counter.
var counterNames = [...]string{"accepted", "completed", "deadlettered", "failed", "retried", "lost", "replayed"}

func (l layout) workStream() string  { return l.prefix + "_" + l.actor }
func (l layout) deadStream() string  { return l.prefix + "_" + l.actor + "_dead" }
func (l layout) countStream() string { return l.prefix + "_" + l.actor + "_counts" }
func (l layout) base() string        { return l.prefix + "." + l.actor }
func (l layout) deadSubject() string { return l.base() + ".dead" }
func (l layout) countSubject(token string) string {
	return l.base() + ".count." + token
}

// subject returns where a task with key token tok waits in place.
func (l layout) subject(place, tok string) string { return l.base() + "." + place + "." + tok }

// places returns the wildcard subject of every task waiting in place.
func (l layout) places(place string) string { return l.base() + "." + place + ".*" }

// keyed returns the subject that matches every live task with key token
// tok, wherever it waits: a send with a unique key expects none there.
func (l layout) keyed(tok string) string { return l.base() + ".*." + tok }

// keyToken returns the subject token of a unique key: a hash, since a key
// may hold any bytes and subjects may not. "" is no key.
func keyToken(key string) string {
	if key == "" {
		return noKey
	}
	sum := sha256.Sum256([]byte(key))
	return "k" + hex.EncodeToString(sum[:20])
}
