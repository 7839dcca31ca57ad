// Package jsserver runs NATS servers with JetStream inside the Go
// process: the embedded default of the durable JetStream actor in package
// jsactor, and the single nodes and three-node clusters its tests and
// benchmarks start.
//
// It is the one package of the module that imports the NATS server; the
// rest reaches a server started here, or any other, through its client
// URL.
package jsserver

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultSyncInterval is how often a server started with a zero
// Options.SyncInterval fsyncs its JetStream store; the NATS server's own
// default is two minutes.
//
// On a single node (streams of one replica) the server hands a write to
// the operating system before it acknowledges it, so a crash of the
// process loses nothing; a crash of the machine (power, kernel) loses
// what was acknowledged since the last fsync, up to the last second of
// writes. One second cost publishers little against two minutes in
// BenchmarkPublishSync (nothing for a publish that waits for its
// acknowledgement, 5 to 16 percent for asynchronous ones) and shrinks what
// a machine's crash loses from two minutes of writes to one second.
// Options.SyncAlways closes the window at the cost of an fsync per write,
// a hundredfold fewer messages a second. The setting for production is
// instead a three-node cluster (StartCluster, or separate nats-server
// processes) with streams replicated three times (R3): a write is
// acknowledged once a majority of the servers holds it, so the crash of
// one machine loses none, and only the loss of two machines within the
// same second can.
const DefaultSyncInterval = time.Second

// readyTimeout bounds how long Start waits for a started server to accept
// connections; it is generous because a busy machine is slow to start.
const readyTimeout = 10 * time.Second

// readyStep is how long Start waits for readiness between its looks for
// a failure the server reported.
const readyStep = 50 * time.Millisecond

// Options configure an embedded server. The zero value is a usable single
// node on a free loopback port, storing in a new temporary directory.
type Options struct {
	// Name is the server's name; "" lets the server generate one. In a
	// cluster it is the prefix of the servers' names and the cluster's name.
	Name string
	// Host is the address clients connect to; "" is 127.0.0.1.
	Host string
	// Port is the client port; 0 is a free port chosen at start.
	Port int
	// Dir is the JetStream store directory; "" is a new temporary
	// directory that Shutdown removes.
	Dir string
	// SyncInterval is how often the store is fsynced; 0 is
	// DefaultSyncInterval.
	SyncInterval time.Duration
	// SyncAlways fsyncs every write; it excludes SyncInterval.
	SyncAlways bool
	// MaxMemory and MaxStore bound JetStream's memory and file storage in
	// bytes; 0 leaves the server's defaults, which follow the machine.
	MaxMemory, MaxStore int64
	// Logger receives the server's log lines; nil drops them. Debug and
	// trace lines are produced only if Logger is enabled for them (trace
	// is slog.LevelDebug-4).
	Logger *slog.Logger
}

// check reports the first option that is out of range.
func (o Options) check() error {
	switch {
	case o.Port < 0 || o.Port > 65535:
		return fmt.Errorf("jsserver: Options.Port is %d; want 0 (a free port) or a port up to 65535", o.Port)
	case o.SyncInterval < 0:
		return fmt.Errorf("jsserver: Options.SyncInterval is %v; want 0 (DefaultSyncInterval) or a positive duration", o.SyncInterval)
	case o.SyncAlways && o.SyncInterval != 0:
		return fmt.Errorf("jsserver: Options.SyncInterval is %v with Options.SyncAlways, which fsyncs every write; want SyncInterval 0", o.SyncInterval)
	case o.MaxMemory < 0:
		return fmt.Errorf("jsserver: Options.MaxMemory is %d; want 0 (the server's default) or a positive number of bytes", o.MaxMemory)
	case o.MaxStore < 0:
		return fmt.Errorf("jsserver: Options.MaxStore is %d; want 0 (the server's default) or a positive number of bytes", o.MaxStore)
	}
	return nil
}

// serverOptions translates o into the server's options; dir is the store
// directory, o.Dir or the temporary one Start made.
func (o Options) serverOptions(dir string) *server.Options {
	so := &server.Options{
		ServerName:         o.Name,
		Host:               o.Host,
		Port:               o.Port,
		JetStream:          true,
		StoreDir:           dir,
		SyncInterval:       o.SyncInterval,
		SyncAlways:         o.SyncAlways,
		JetStreamMaxMemory: o.MaxMemory,
		JetStreamMaxStore:  o.MaxStore,
		// A library must not take the process's signals.
		NoSigs: true,
	}
	if so.Host == "" {
		so.Host = "127.0.0.1"
	}
	// The server reads port 0 as its default, 4222, which the shared
	// services hold.
	if so.Port == 0 {
		so.Port = server.RANDOM_PORT
	}
	if !so.SyncAlways && so.SyncInterval == 0 {
		so.SyncInterval = DefaultSyncInterval
	}
	return so
}

// A Server is a NATS server with JetStream running in this process.
type Server struct {
	srv     *server.Server
	log     *logger
	tempDir string // removed by Shutdown; "" if the store is the caller's

	shutdown sync.Once
}

// Start starts a server and returns once it accepts connections with
// JetStream enabled.
func Start(opts Options) (*Server, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	return start(opts, nil)
}

// start starts a server with opts, checked, and adjust's changes to the
// server's options, which the cluster uses for its routes.
func start(opts Options, adjust func(*server.Options)) (*Server, error) {
	s := &Server{log: &logger{log: opts.Logger}}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "jsserver-"); err != nil {
			return nil, fmt.Errorf("jsserver: making a temporary store directory: %w", err)
		}
		s.tempDir = dir
	}
	so := opts.serverOptions(dir)
	if adjust != nil {
		adjust(so)
	}
	srv, err := server.NewServer(so)
	if err != nil {
		s.removeTemp()
		return nil, fmt.Errorf("jsserver: configuring the server: %w", err)
	}
	s.srv = srv
	debug, trace := s.log.levels()
	srv.SetLoggerV2(s.log, debug, trace, false)

	// Start returns early after a Fatalf. A cluster's route listener may
	// fail after it returns, on a goroutine of its own, leaving a server
	// that is never ready: so readiness is awaited in short steps, each
	// followed by a look for a fatal line.
	srv.Start()
	for end := time.Now().Add(readyTimeout); ; {
		if line := s.log.fatalLine(); line != "" {
			s.Shutdown()
			return nil, fmt.Errorf("jsserver: starting the server (Options.Host %q, Options.Port %d, Options.Dir %q): %s",
				so.Host, opts.Port, dir, line)
		}
		if srv.ReadyForConnections(readyStep) {
			break
		}
		if time.Now().After(end) {
			s.Shutdown()
			return nil, fmt.Errorf("jsserver: the server is not ready for connections after %v", readyTimeout)
		}
	}
	if !srv.JetStreamEnabled() {
		s.Shutdown()
		return nil, errors.New("jsserver: the server started without JetStream")
	}
	return s, nil
}

// ClientURL returns the URL clients connect to, for nats.Connect.
func (s *Server) ClientURL() string { return s.srv.ClientURL() }

// Name returns the server's name, the generated one if Options.Name was "".
func (s *Server) Name() string { return s.srv.Name() }

// Running reports whether the server runs: it was started and not shut down.
func (s *Server) Running() bool { return s.srv.Running() }

// Shutdown stops the server and waits until it has stopped, then removes
// the store directory if Start made it. Calling it again does nothing.
func (s *Server) Shutdown() {
	s.shutdown.Do(func() {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.removeTemp()
	})
}

func (s *Server) removeTemp() {
	if s.tempDir == "" {
		return
	}
	if err := os.RemoveAll(s.tempDir); err != nil {
		s.log.Errorf("jsserver: removing the temporary store directory: %v", err)
	}
}
