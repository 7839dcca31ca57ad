package jsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/leakcheck"
	"github.com/nats-io/nats.go/jetstream"
)

func startT(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start(%+v): %v", opts, err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func TestPublishAndConsume(t *testing.T) {
	for _, opts := range []Options{
		{},
		{Name: "named", SyncInterval: 100 * time.Millisecond, MaxMemory: 1 << 20, MaxStore: 1 << 30},
		{SyncAlways: true},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			leakcheck.Check(t)
			s := startT(t, opts)
			if opts.Name != "" && s.Name() != opts.Name {
				t.Errorf("Name() = %q, want %q", s.Name(), opts.Name)
			}
			if !strings.HasPrefix(s.ClientURL(), "nats://127.0.0.1:") || strings.HasSuffix(s.ClientURL(), ":4222") {
				t.Errorf("ClientURL() = %q, want a free port on 127.0.0.1", s.ClientURL())
			}
			js := connect(t, s.ClientURL())
			st := createStream(t, js, "ORDERS", 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			want := []string{"one", "two", "three"}
			for _, w := range want {
				if _, err := js.Publish(ctx, "ORDERS.new", []byte(w)); err != nil {
					t.Fatalf("Publish %q: %v", w, err)
				}
			}
			c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy})
			if err != nil {
				t.Fatalf("CreateConsumer: %v", err)
			}
			batch, err := c.Fetch(len(want), jetstream.FetchMaxWait(5*time.Second))
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			var got []string
			for m := range batch.Messages() {
				got = append(got, string(m.Data()))
				if err := m.Ack(); err != nil {
					t.Errorf("Ack: %v", err)
				}
			}
			if err := batch.Error(); err != nil {
				t.Errorf("batch: %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("consumed %q, want %q", got, want)
			}
		})
	}
}

func TestRestartKeepsMessages(t *testing.T) {
	leakcheck.Check(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	s1 := startT(t, Options{Dir: dir})
	js := connect(t, s1.ClientURL())
	createStream(t, js, "KEPT", 1)
	for i := range 3 {
		if _, err := js.Publish(ctx, "KEPT.x", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	s1.Shutdown()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("Shutdown removed the caller's Dir: %v", err)
	}

	s2 := startT(t, Options{Dir: dir})
	js2 := connect(t, s2.ClientURL())
	st, err := js2.Stream(ctx, "KEPT")
	if err != nil {
		t.Fatalf("the restarted server has no stream KEPT: %v", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.State.Msgs != 3 {
		t.Errorf("after a restart the stream holds %d messages, want 3", info.State.Msgs)
	}
	m, err := st.GetMsg(ctx, 2)
	if err != nil {
		t.Fatalf("GetMsg(2): %v", err)
	}
	if string(m.Data) != "m1" {
		t.Errorf("message 2 is %q, want %q", m.Data, "m1")
	}
}

func TestShutdownTwiceRemovesTempDir(t *testing.T) {
	leakcheck.Check(t)
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.tempDir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the temporary store %q: %v", dir, err)
	}
	if !s.Running() {
		t.Error("Running() = false after Start")
	}
	s.Shutdown()
	s.Shutdown()
	if s.Running() {
		t.Error("Running() = true after Shutdown")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary store %q after Shutdown: %v, want it removed", dir, err)
	}
}

func TestBadOptions(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	inUse := taken.Addr().(*net.TCPAddr).Port

	for _, tc := range []struct {
		name  string
		opts  Options
		field string
	}{
		{"negative SyncInterval", Options{SyncInterval: -time.Second}, "Options.SyncInterval"},
		{"SyncAlways with SyncInterval", Options{SyncAlways: true, SyncInterval: time.Second}, "Options.SyncInterval"},
		{"port in use", Options{Port: inUse}, "Options.Port"},
		{"negative port", Options{Port: -1}, "Options.Port"},
		{"port too large", Options{Port: 70000}, "Options.Port"},
		{"negative MaxMemory", Options{MaxMemory: -1}, "Options.MaxMemory"},
		{"negative MaxStore", Options{MaxStore: -1}, "Options.MaxStore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			s, err := Start(tc.opts)
			if err == nil {
				s.Shutdown()
				t.Fatalf("Start(%+v) succeeded, want an error naming %s", tc.opts, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Start(%+v) = %v, want an error naming %s", tc.opts, err, tc.field)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("a failed Start left %s in the temporary directory", left[0].Name())
			}
		})
	}
}
