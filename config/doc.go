// Package config loads pools and actors declared in a YAML file, so that
// their sizes and timeouts can change without a rebuild and be checked
// before a deploy.
//
// A file declares named pools under "pools" and named actors under
// "actors". Every setting of [actorpool.Config] and [actor.Config] that is
// not code has a key; durations are written as Go durations, such as 5s,
// 250ms or 1h30m, and numbers and booleans without quotes, as YAML reads
// them: "8" is a string, and refused where a number is wanted:
//
//	pools:
//	  redis:
//	    max_objects: 16
//	    min_idle: 2
//	    max_idle_time: 5m
//	    create_timeout: 2s
//	actors:
//	  audit:
//	    workers: 4
//	    capacity: 10000
//	    overflow: block
//	    max_attempts: 3
//	    backoff: {initial: 100ms, max: 5s, multiplier: 2, jitter: 0.2}
//	    lease: 10s   # a durable actor's
//	    heartbeat: 2s
//
// A number must not start with 0, as 010 does, which YAML 1.1 reads as
// octal and YAML 1.2 as decimal: write 10, or 0o10 for octal.
//
// A YAML merge key (<<: *anchor) shares settings between entries.
//
// # Environment overrides
//
// A variable named ACTORPOOL_POOL_<POOL>_<SETTING> or
// ACTORPOOL_ACTOR_<ACTOR>_<SETTING> replaces one setting of a declared pool
// or actor, where <POOL>, <ACTOR> and <SETTING> are the names in the file in
// upper case with every character other than a letter or digit replaced by
// an underscore: ACTORPOOL_POOL_REDIS_MAX_OBJECTS=32,
// ACTORPOOL_ACTOR_AUDIT_BACKOFF_INITIAL=50ms. A variable that names a
// declared pool or actor but none of its settings is reported as a problem,
// so that a misspelt override does not go unnoticed.
//
// # Problems
//
// Load and Parse check everything they can before they return, and report
// every problem at once as an [*Error] whose [Problem] values name the file,
// the line and column, the setting, its value and the rule it breaks — the
// rules of [actorpool.Config.Validate] and [actor.Config.Validate] among
// them:
//
//	actorpool.yaml:4:18: pools.redis.min_idle = 40: must not exceed max_objects (16)
//
// The pools and actors a file declares are mapped onto the libraries' own
// types: [Pool.Config] is an [actorpool.Config] ready for [actorpool.New],
// and [ActorConfig] makes an [actor.Config] for [actor.New]. What only code
// can say — a Logger, an Observer, an OnError handler, a dead-letter sink —
// is set on those after loading.
//
// # Durable actors
//
// An actor's entry also serves a durable actor (packages pgactor and
// jsactor), whose Config has workers, attempts, backoff, timeout and grace
// as actor.Config does, and two settings of its own, lease and heartbeat,
// which Load checks by the rules both backends share. This package does
// not import the backends: the program maps an [Actor] onto its backend's
// Config, and [File.ActorProblems] places what that Config's Validate
// finds — a rule of one backend only, such as JetStream's shortest lease —
// in the file, as Load places its own problems:
//
//	actorpool.yaml:9:12: actors.audit.lease = 200ms: must be at least 500ms (zero means the default, 5s)
package config
