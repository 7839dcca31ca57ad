package pgactor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	cron "github.com/netresearch/go-cron"
)

// Periodic tasks. A schedule is a row of the schedules table: an actor, a
// name, a spec saying when it fires, and the task it sends each time. Every
// running instance of the actor, in every process, runs the scheduler
// (scheduler.go): there is no leader to lose. A schedule fires once per
// period however many processes run, because the scheduler takes a due
// schedule's row with FOR UPDATE SKIP LOCKED, sends the period's task and
// moves next_at past now in one transaction, and because the period's task
// is guarded by a row of unique_periods that a second send for the same
// period — a retried transaction, a process whose view is stale — cannot
// insert again.

// ErrNoSchedule is wrapped by the error of Unschedule and RemoveSchedule
// when the actor has no schedule of that name.
var ErrNoSchedule = errors.New("pgactor: no such schedule")

// Missed says what the scheduler does when it finds that a schedule's fire
// times passed while no process ran it: it passed at least one fire time
// and the one after it.
type Missed uint8

const (
	// RunOnce sends one task, for the latest fire time passed, and goes on
	// from the next: however long the outage, one task makes up for it.
	RunOnce Missed = iota
	// SkipMissed sends nothing for the fire times passed, and goes on from
	// the next.
	SkipMissed
)

var missedNames = [...]string{RunOnce: "run_once", SkipMissed: "skip"}

// String returns the policy's name as the schedules table stores it.
func (m Missed) String() string {
	if int(m) < len(missedNames) {
		return missedNames[m]
	}
	return "Missed(" + strconv.Itoa(int(m)) + ")"
}

func parseMissed(s string) Missed {
	if s == missedNames[SkipMissed] {
		return SkipMissed
	}
	return RunOnce
}

// A ScheduleOption sets a property of a schedule.
type ScheduleOption func(*scheduleOptions)

type scheduleOptions struct {
	typ      string
	priority int16
	missed   Missed
	err      error
}

// OnMissed sets what the scheduler does with the fire times that passed
// while no process ran the actor; the default is RunOnce.
func OnMissed(m Missed) ScheduleOption {
	return func(o *scheduleOptions) {
		if m != RunOnce && m != SkipMissed {
			o.err = fmt.Errorf("OnMissed: %v is neither RunOnce nor SkipMissed", m)
		}
		o.missed = m
	}
}

// SchedulePriority is the Priority of the schedule's tasks.
func SchedulePriority(p int16) ScheduleOption {
	return func(o *scheduleOptions) { o.priority = p }
}

// ScheduleType is the type (see WithType) of the schedule's tasks; without
// it their type is the Go type of the payload.
func ScheduleType(name string) ScheduleOption {
	return func(o *scheduleOptions) {
		switch {
		case name == "":
			o.err = errors.New("ScheduleType: the name is empty")
		case !storableText(name):
			o.err = fmt.Errorf("ScheduleType(%q): the name must be valid UTF-8, without NUL", name)
		}
		o.typ = name
	}
}

// A ScheduleInfo describes a schedule, as Schedules and ListSchedules
// read it.
type ScheduleInfo struct {
	Actor    string
	Name     string
	Spec     string
	Type     string // the type of its tasks
	Payload  []byte // the payload of its tasks, encoded by the actor's codec
	Priority int16
	OnMissed Missed
	// NextAt is its next fire time; zero if the spec fires no more.
	NextAt time.Time
	// LastPeriod is the fire time of the last task it sent, and
	// LastTaskID that task; zero before the first.
	LastPeriod time.Time
	LastTaskID uint64
	CreatedAt  time.Time
}

// A SpecError is the error of a schedule whose spec the cron parser
// refuses, or that never fires. It says what a spec may be.
type SpecError struct {
	Spec string
	Err  error
}

// Error names the spec and says what is allowed.
func (e *SpecError) Error() string {
	return fmt.Sprintf("pgactor: schedule spec %q: %v; want \"@every <duration>\" (a whole number of seconds, at least 1s, "+
		"as time.ParseDuration writes it, e.g. @every 90s), a 5-field cron expression (minute hour day-of-month month day-of-week, "+
		"e.g. \"30 9 * * 1-5\", in UTC unless it starts with CRON_TZ=<zone>), or one of @hourly, @daily, @weekly, @monthly, @yearly",
		e.Spec, e.Err)
}

// Unwrap returns the parser's error.
func (e *SpecError) Unwrap() error { return e.Err }

// Schedule registers, durably, a schedule named name that sends the actor
// a task for payload at each fire time of spec, or replaces the actor's
// schedule of that name. spec is "@every <duration>" — fire times at the
// multiples of the duration since the Unix epoch, so "@every 1h" fires on
// the hour — a 5-field cron expression, read in UTC unless it starts with
// CRON_TZ=<zone>, or a descriptor: @hourly, @daily (@midnight), @weekly,
// @monthly, @yearly (@annually). Where the zone's clocks go back, a cron
// schedule whose hour is fixed fires at the first of the wall-clock times
// that come round twice, not at both; where they go forward, a time that
// does not exist fires at the next that does.
//
// Every running instance of the actor, in any process, sends the
// schedule's tasks: exactly one task per fire time, however many
// processes run, whichever of them dies. Fire times that pass while no
// process runs the actor are made up for as OnMissed says: by default, one
// task for the latest of them, when a process next runs the actor.
//
// Replacing a schedule with the same spec keeps its next fire time, so
// that processes may call Schedule as they start without moving it: the
// fire times missed while they were down are still made up for. A new
// spec fires next at its first fire time after now.
//
// It fails with a *SpecError when spec is malformed or never fires, an
// *EncodeError when the codec refuses the payload, and an error wrapping
// ErrUnknownActor when the actor is no longer registered in the schema; then
// nothing is stored.
func (a *Actor[T]) Schedule(ctx context.Context, name, spec string, payload T, opts ...ScheduleOption) error {
	o := scheduleOptions{typ: a.typ}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkScheduleName(name); err != nil {
		return fmt.Errorf("pgactor: schedule %q on %q: %w", name, a.name, err)
	}
	if o.err != nil {
		return fmt.Errorf("pgactor: schedule %q on %q: %w", name, a.name, o.err)
	}
	c, err := parseSpec(spec)
	if err != nil {
		return err
	}
	enc, err := a.codec.Encode(payload)
	if err != nil {
		return &EncodeError{Actor: a.name, Type: a.typ, Err: err}
	}
	now, err := a.store.now(ctx)
	if err != nil {
		return fmt.Errorf("pgactor: schedule %q on %q: %w", name, a.name, err)
	}
	next := c.next(now)
	if next.IsZero() {
		return &SpecError{Spec: spec, Err: errors.New("it has no fire time in the next years")}
	}
	stored, err := a.store.putSchedule(ctx, storedSchedule{name: name, spec: spec, typ: o.typ, payload: notNil(enc), priority: o.priority, missed: o.missed, next: next})
	switch {
	case err != nil && !isForeignKeyViolation(err):
		return fmt.Errorf("pgactor: schedule %q on %q: %w", name, a.name, err)
	case err != nil || !stored:
		return fmt.Errorf("pgactor: schedule %q on %q: %w in schema %q", name, a.name, ErrUnknownActor, a.set.schema)
	}
	nudge(a.schedWake)
	return nil
}

// Unschedule removes the actor's schedule named name; it fails with an
// error wrapping ErrNoSchedule if there is none. The tasks it sent are
// left alone, and the periods it sent tasks for are remembered until they
// end: a schedule of the same name made again in the same period does not
// send that period again.
func (a *Actor[T]) Unschedule(ctx context.Context, name string) error {
	return removeSchedule(ctx, a.pool, a.store, name)
}

// Schedules returns the actor's schedules, by name.
func (a *Actor[T]) Schedules(ctx context.Context) ([]ScheduleInfo, error) {
	infos, err := a.store.schedules(ctx, a.pool)
	if err != nil {
		return nil, fmt.Errorf("pgactor: schedules of %q: %w", a.name, err)
	}
	return infos, nil
}

// ListSchedules returns the schedules of the actor named actor in schema,
// by name, for operators and tools that hold no Actor of its payload type.
// It fails with an error wrapping ErrUnknownActor when no actor of that name
// is registered there.
func ListSchedules(ctx context.Context, db Querier, schema, actor string) ([]ScheduleInfo, error) {
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	s := &store{schema: schema, actor: actor}
	infos, err := s.schedules(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("pgactor: schedules of %q: %w", actor, err)
	}
	if len(infos) == 0 {
		known, err := s.actorExists(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("pgactor: schedules of %q: %w", actor, err)
		}
		if !known {
			return nil, fmt.Errorf("pgactor: schedules of %q: %w in schema %q", actor, ErrUnknownActor, schema)
		}
	}
	return infos, nil
}

// RemoveSchedule removes the schedule name of the actor named actor in
// schema, as Actor.Unschedule does.
func RemoveSchedule(ctx context.Context, db Querier, schema, actor, name string) error {
	if err := checkSchema(schema); err != nil {
		return err
	}
	return removeSchedule(ctx, db, &store{schema: schema, actor: actor}, name)
}

func removeSchedule(ctx context.Context, db Querier, s *store, name string) error {
	removed, err := s.deleteSchedule(ctx, db, name)
	switch {
	case err != nil:
		return fmt.Errorf("pgactor: unschedule %q of %q: %w", name, s.actor, err)
	case !removed:
		return fmt.Errorf("pgactor: unschedule %q of %q: %w in schema %q", name, s.actor, ErrNoSchedule, s.schema)
	}
	return nil
}

// checkScheduleName refuses the names a schedule cannot have.
func checkScheduleName(name string) error {
	if name == "" || len(name) > maxName || !storableText(name) {
		return fmt.Errorf("the name must be valid UTF-8, without NUL, of 1 to %d bytes", maxName)
	}
	return nil
}

// isForeignKeyViolation reports whether err is PostgreSQL's refusal of a
// row whose actor is not registered: the actor was removed as the
// schedule was stored.
func isForeignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// A cadence says when a schedule fires.
type cadence interface {
	// next returns the first fire time after t, or the zero time if
	// there is none.
	next(t time.Time) time.Time
}

// every fires at the multiples of its duration since the Unix epoch, as
// PostgreSQL's date_bin(d, t, 'epoch') divides time, so that its periods
// are the same in every process and after every restart.
type every time.Duration

func (e every) next(t time.Time) time.Time {
	d := time.Duration(e).Microseconds()
	us := t.UnixMicro()
	k := us / d
	if us%d < 0 {
		k-- // floor, before the epoch
	}
	return time.UnixMicro((k + 1) * d).UTC()
}

// start returns the fire time at or before t.
func (e every) start(t time.Time) time.Time {
	return time.UnixMicro(e.next(t).UnixMicro() - time.Duration(e).Microseconds()).UTC()
}

// cronCadence fires at a cron expression's times.
type cronCadence struct{ s cron.Schedule }

// next returns the first fire time after t. Where the clocks of the
// schedule's zone go back an hour (the end of daylight saving time), the
// wall-clock times of that hour come round twice, and the cron parser
// fires a fixed hour's times at both: "30 1 * * *" would send two tasks
// on that day. As cron daemons do, a schedule whose hour is fixed fires at
// the first of them only; one whose hour is a wildcard ("*/15 * * * *")
// fires through the repeated hour too, as real time passes. (Where the
// clocks go forward, the parser fires a time that does not exist at the
// next that does, once.)
func (c cronCadence) next(t time.Time) time.Time {
	n := c.s.Next(t.UTC())
	for !n.IsZero() && c.skips(n) {
		n = c.s.Next(n)
	}
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// cronStar is the bit the cron parser sets in a field that was a
// wildcard, beside the bits of the values it allows (robfig/cron's
// starBit, which go-cron keeps and does not export;
// TestCronStarBit checks it).
const cronStar = 1 << 63

// skips reports whether c leaves out its fire time t: the second
// occurrence of a wall-clock time, in a zone whose clocks went back, of a
// schedule whose hour is fixed.
func (c cronCadence) skips(t time.Time) bool {
	spec, ok := c.s.(*cron.SpecSchedule)
	if !ok || spec.Hour&cronStar != 0 {
		return false
	}
	loc := spec.Location
	if loc == nil || loc == time.Local {
		loc = time.UTC // the schedule reads the UTC times it is given
	}
	return repeatsWallClock(t.In(loc))
}

// repeatsWallClock reports whether the wall-clock time of t, in t's
// location, was already read earlier: the clocks went back less than
// three hours before t, by more than the time since.
func repeatsWallClock(t time.Time) bool {
	_, now := t.Zone()
	_, before := t.Add(-3 * time.Hour).Zone()
	if before <= now {
		return false
	}
	earlier := t.Add(-time.Duration(before-now) * time.Second)
	_, then := earlier.Zone()
	return then != now && earlier.Format(time.DateTime) == t.Format(time.DateTime)
}

// cronParser reads 5-field cron expressions and descriptors; it refuses
// @every of less than a second.
var cronParser = cron.StandardParser()

// parseSpec reads a schedule's spec with the cron parser.
func parseSpec(spec string) (cadence, error) {
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, &SpecError{Spec: spec, Err: err}
	}
	if d, ok := s.(cron.ConstantDelaySchedule); ok {
		// The parser drops the fraction of a second; a spec that had one
		// would fire at other times than it says.
		_, after, _ := strings.Cut(strings.TrimSpace(spec), "@every ")
		if want, err := time.ParseDuration(strings.TrimSpace(after)); err != nil || want != d.Delay {
			return nil, &SpecError{Spec: spec, Err: errors.New("the duration is not a whole number of seconds")}
		}
		return every(d.Delay), nil
	}
	return cronCadence{s}, nil
}

// cronSteps bounds the fire times plan walks one by one before it jumps.
const cronSteps = 10000

// plan decides what the scheduler does with a schedule of cadence c whose
// fire time due has come (due ≤ now): whether to send a task, for which
// fire time (its period), and the schedule's next fire time, after now
// (zero if none). A fire time is missed when the one after it has come
// too: the scheduler was a whole period late, as no process ran it.
func plan(c cadence, due, now time.Time, missed Missed) (period time.Time, send bool, next time.Time) {
	latest := due
	if e, ok := c.(every); ok {
		if s := e.start(now); s.After(due) {
			latest = s
		}
	} else {
		n := c.next(latest)
		for steps := 0; !n.IsZero() && !n.After(now); steps++ {
			if steps == cronSteps {
				if p, ok := c.(cronCadence).s.(interface{ Prev(time.Time) time.Time }); ok {
					prev := p.Prev(now.Truncate(time.Second).Add(time.Second))
					for !prev.IsZero() && c.(cronCadence).skips(prev) {
						prev = p.Prev(prev)
					}
					if prev.After(n) {
						n = prev.UTC()
					}
				}
			}
			latest, n = n, c.next(n)
		}
	}
	next = c.next(latest)
	if latest.After(due) && missed == SkipMissed {
		return time.Time{}, false, next
	}
	return latest, true, next
}
