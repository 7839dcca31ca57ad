package jsactor

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The headers a task's message carries. A message just sent carries only
// what its send set; a copy — a retry, a give-back, a snooze, a task come
// due — carries what the actor must remember across it, since the
// server's delivery count starts again with each copy.
const (
	hdrType     = "Actorpool-Type"     // the task's type, when WithType named one
	hdrKey      = "Actorpool-Key"      // the unique key, as sent
	hdrID       = "Actorpool-Id"       // the task's ID, on a copy
	hdrEnqueued = "Actorpool-Enqueued" // when the task was first stored, Unix nanoseconds, on a copy
	hdrDue      = "Actorpool-Due"      // when a delayed task or a retry is due, Unix nanoseconds
	hdrCharged  = "Actorpool-Charged"  // attempts charged before this copy
	hdrLost     = "Actorpool-Lost"     // runs lost before this copy
	hdrGen      = "Actorpool-Gen"      // how many copies came before this one
	hdrError    = "Actorpool-Error"    // the last failed attempt's error
	hdrStarted  = "Actorpool-Started"  // when the last run began, Unix nanoseconds

	hdrReason   = "Actorpool-Reason"   // on a dead letter: why
	hdrAttempts = "Actorpool-Attempts" // on a dead letter: runs, lost ones included
	hdrReplayOf = "Actorpool-Replay-Of"

	hdrIncr = "Nats-Incr" // adds to a counter stream's subject
)

// maxErrorLen bounds an error message kept in a header.
const maxErrorLen = 1024

// A record is what a task's message says about it.
type record struct {
	id       uint64
	typ      string
	key      string
	enqueued time.Time
	due      time.Time
	charged  int
	lost     int
	gen      int
	lastErr  string
	started  time.Time
	trace    nats.Header // a Tracer's headers, which every copy carries (trace.go)
}

// readRecord reads the record of msg, stored at seq at stamp.
func readRecord(h nats.Header, seq uint64, stamp time.Time) record {
	r := record{
		id: seq, typ: readText(h.Get(hdrType)), key: readText(h.Get(hdrKey)), enqueued: stamp,
		charged: headerInt(h, hdrCharged), lost: headerInt(h, hdrLost), gen: headerInt(h, hdrGen),
		lastErr: readText(h.Get(hdrError)), due: headerTime(h, hdrDue), started: headerTime(h, hdrStarted),
		trace: traceHeader(h),
	}
	if id, err := strconv.ParseUint(h.Get(hdrID), 10, 64); err == nil && id > 0 {
		r.id = id
	}
	if t := headerTime(h, hdrEnqueued); !t.IsZero() {
		r.enqueued = t
	}
	return r
}

// header returns the headers of a copy of r: gen is the copy's
// generation.
func (r *record) header() nats.Header {
	h := nats.Header{}
	addTrace(h, r.trace)
	h.Set(hdrID, strconv.FormatUint(r.id, 10))
	h.Set(hdrEnqueued, strconv.FormatInt(r.enqueued.UnixNano(), 10))
	h.Set(hdrGen, strconv.Itoa(r.gen))
	if r.typ != "" {
		h.Set(hdrType, headerText(r.typ))
	}
	if r.key != "" {
		h.Set(hdrKey, headerText(r.key))
	}
	if !r.due.IsZero() {
		h.Set(hdrDue, dueText(r.due))
	}
	if r.charged > 0 {
		h.Set(hdrCharged, strconv.Itoa(r.charged))
	}
	if r.lost > 0 {
		h.Set(hdrLost, strconv.Itoa(r.lost))
	}
	if r.lastErr != "" {
		h.Set(hdrError, headerText(r.lastErr))
	}
	if !r.started.IsZero() {
		h.Set(hdrStarted, strconv.FormatInt(r.started.UnixNano(), 10))
	}
	return h
}

// copyID is the message ID of r's copy of generation gen: the same copy
// published twice is stored once.
func copyID(r *record) string {
	return "c-" + strconv.FormatUint(r.id, 10) + "-" + strconv.Itoa(r.gen)
}

// replayIDPrefix begins the message ID of a dead letter's replay.
const replayIDPrefix = "replay-"

// sendID returns the message ID of a send given MsgID id: id as
// headerText writes it, since a header loses outer spaces — the server
// takes " x" for "x", and a blank ID for none, storing each send — and
// quoted as well when it begins as the message IDs that the actor gives
// its own messages in the work stream do — a task's next copy (copyID), a
// replay — which no quoted ID does: the server would take a send of
// "c-7-1" for task 7's retry, or the retry for the send, and keep only
// one of the two tasks.
func sendID(id string) string {
	if strings.HasPrefix(id, "c-") || strings.HasPrefix(id, replayIDPrefix) {
		return quoted + strconv.Quote(id)
	}
	return headerText(id)
}

// errorText is err's message, cut to maxErrorLen bytes.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > maxErrorLen {
		s = strings.ToValidUTF8(s[:maxErrorLen], "") + "…"
	}
	return s
}

// quoted marks a header value that headerText quoted.
const quoted = "~q"

// headerText returns s as a header value that the wire carries unchanged:
// s itself when it is printable UTF-8 with no space at either end, since a
// header ends at a line break and loses its outer spaces; otherwise, or
// when s could be taken for a quoted value, "~q" and s quoted as a Go
// string. readText undoes it.
func headerText(s string) string {
	plain := utf8.ValidString(s) && !strings.HasPrefix(s, quoted) &&
		strings.TrimSpace(s) == s && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' })
	if plain {
		return s
	}
	return quoted + strconv.Quote(s)
}

// readText reads a header value written by headerText. A value quoted
// badly — not written by this package — is returned as it is.
func readText(v string) string {
	if !strings.HasPrefix(v, quoted) {
		return v
	}
	s, err := strconv.Unquote(v[len(quoted):])
	if err != nil {
		return v
	}
	return s
}

// maxDue is the latest due time a header holds: Unix nanoseconds end in
// the year 2262.
var maxDue = time.Unix(0, math.MaxInt64)

// dueText returns due as a header value, in Unix nanoseconds. A time past
// maxDue — RunAt in the year 3000, After or Snooze of centuries — is kept
// as maxDue: its nanoseconds would wrap to a time in the past, and the
// task would come due at once.
func dueText(due time.Time) string {
	if due.After(maxDue) {
		due = maxDue
	}
	return strconv.FormatInt(due.UnixNano(), 10)
}

func headerInt(h nats.Header, name string) int {
	n, _ := strconv.Atoi(h.Get(name))
	return max(n, 0)
}

func headerTime(h nats.Header, name string) time.Time {
	n, err := strconv.ParseInt(h.Get(name), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// recordOf reads the record of a delivered message.
func recordOf(msg jetstream.Msg) (record, jetstream.MsgMetadata, error) {
	md, err := msg.Metadata()
	if err != nil {
		return record{}, jetstream.MsgMetadata{}, err
	}
	return readRecord(msg.Headers(), md.Sequence.Stream, md.Timestamp), *md, nil
}
