// Command actorpool shows the actorpool library at work.
//
// Usage:
//
//	actorpool demo [flags]              pool connections to a server under load
//	actorpool config check FILE...      check configuration files
//	actorpool migrate --postgres URL    create or upgrade the durable actors' tables
//	actorpool console --postgres URL    a web console on the durable actors
//	actorpool console --jetstream       the same, for those on NATS JetStream
//	actorpool bench                     how to run the benchmark comparison
//	actorpool help [COMMAND]            explain a command
//
// The demo starts an embedded Redis-protocol server on 127.0.0.1 unless
// given --redis ADDR or --postgres DSN, pools connections to it, drives
// concurrent clients against it, sends an audit task per request through
// a task actor — durable in PostgreSQL with --postgres, or on NATS
// JetStream with --jetstream (an embedded server, or --jetstream=URL), so
// that Ctrl-C loses no task and the next run finishes them — and shows the pool and
// the actor live. Run "actorpool help demo" for its flags. "actorpool
// migrate" creates or upgrades the durable actors' tables; "actorpool
// console" serves a web page to watch and operate them, in PostgreSQL or
// on JetStream (see package internal/console).
//
// Exit codes: 0 success; 1 failure (a server that cannot be reached,
// a configuration with problems, failed requests); 2 a usage error;
// 130 stopped by Ctrl-C (the summary is still printed).
package main
