package jsactor

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config[int]
		field string
	}{
		{"zero", Config[int]{}, ""},
		{"full", Config[int]{Workers: 4, MaxAttempts: 3, Lease: 2 * time.Second, Heartbeat: time.Second, Replicas: 3, Prefix: "app_1"}, ""},
		{"negative workers", Config[int]{Workers: -1}, "Workers"},
		{"short lease", Config[int]{Lease: 10 * time.Millisecond}, "Lease"},
		{"heartbeat past half the lease", Config[int]{Lease: time.Second, Heartbeat: 600 * time.Millisecond}, "Heartbeat"},
		{"heartbeat whose double overflows", Config[int]{Heartbeat: math.MaxInt64}, "Heartbeat"},
		{"prefix with a dot", Config[int]{Prefix: "a.b"}, "Prefix"},
		{"replicas", Config[int]{Replicas: 7}, "Replicas"},
		{"fetch batch", Config[int]{FetchBatch: -1}, "FetchBatch"},
		{"negative dedup window", Config[int]{DedupWindow: -time.Second}, "DedupWindow"},
		{"dedup window under four leases", Config[int]{Lease: time.Minute, DedupWindow: 3 * time.Minute}, "DedupWindow"},
		{"dedup window of four default leases", Config[int]{DedupWindow: 4 * DefaultLease}, ""},
		{"dedup window with a lease of centuries", Config[int]{Lease: math.MaxInt64, DedupWindow: time.Hour}, "DedupWindow"},
		{"negative max lost", Config[int]{MaxLost: -1}, "MaxLost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tc.field != "" && (err == nil || !strings.Contains(err.Error(), tc.field)):
				t.Errorf("Validate = %v, want an error naming %s", err, tc.field)
			}
		})
	}
}

func TestNewRefusals(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	nc := connect(t, srv.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context, actor.Task[int]) error { return nil }

	if _, err := New(ctx, nc, "a.b", noop, Config[int]{}); err == nil || !strings.Contains(err.Error(), "letters, digits") {
		t.Errorf("a name with a dot: %v", err)
	}
	if _, err := New[int](ctx, nc, "sendonly", nil, Config[int]{Workers: 2}); err == nil || !strings.Contains(err.Error(), "send-only") {
		t.Errorf("workers without a handler: %v", err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "actorpool_limits", Subjects: []string{"actorpool.limits.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, nc, "limits", noop, Config[int]{}); !errors.Is(err, ErrBadStream) || !strings.Contains(err.Error(), "retention") {
		t.Errorf("a stream with limits retention: %v, want ErrBadStream naming the retention", err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "actorpool_subjects", Subjects: []string{"elsewhere.>"}, Retention: jetstream.WorkQueuePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, nc, "subjects", noop, Config[int]{}); !errors.Is(err, ErrBadStream) || !strings.Contains(err.Error(), "subjects") {
		t.Errorf("a stream with other subjects: %v, want ErrBadStream naming the subjects", err)
	}
	// A work-queue stream takes one consumer per subject: one made by hand
	// on the ready subjects leaves no room for the actor's.
	hand, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "actorpool_hand", Retention: jetstream.WorkQueuePolicy,
		Subjects: []string{"actorpool.hand.r.*", "actorpool.hand.d.*", "actorpool.hand.b.*"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hand.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "mine", FilterSubject: "actorpool.hand.r.*", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, nc, "hand", noop, Config[int]{}); !errors.Is(err, ErrBadStream) || !strings.Contains(err.Error(), `consumer "run"`) {
		t.Errorf("a work stream with a consumer of its own on the ready subjects: %v, want ErrBadStream naming the consumer", err)
	}
	if _, err := ReadStats(ctx, nc, "", "nobody"); !errors.Is(err, ErrUnknownActor) {
		t.Errorf("stats of an actor never created: %v, want ErrUnknownActor", err)
	}
	closed := connect(t, srv.ClientURL())
	closed.Close()
	if _, err := New(ctx, closed, "closed", noop, Config[int]{}); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("a closed connection: %v", err)
	}
}

func TestNoJetStream(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_, err = New(ctxT(t), nc, "nojs", func(context.Context, actor.Task[int]) error { return nil }, Config[int]{})
	if err == nil || !strings.Contains(err.Error(), "JetStream") {
		t.Errorf("New on a server without JetStream: %v, want an error that says so", err)
	}
}

// TestUndecodable stores a payload the codec refuses ahead of a good
// one: it is dead-lettered with its own reason, and the good one runs.
func TestUndecodable(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	nc := connect(t, srv.ClientURL())
	ran := make(chan int, 1)
	a, err := New(ctx, nc, "decode", func(ctx context.Context, task actor.Task[int]) error {
		ran <- task.Payload
		return nil
	}, Config[int]{OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	js, _ := jetstream.New(nc)
	if _, err := js.Publish(ctx, "actorpool.decode.r._", []byte(`"not a number"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(ctx, 7); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-ran:
		if p != 7 {
			t.Errorf("ran %d, want 7", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the good task did not run")
	}
	var letters []DeadLetter[int]
	eventually(t, 5*time.Second, "a dead letter", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{Reason: ReasonUndecodable})
		return err == nil && len(letters) == 1
	})
	if d := letters[0]; d.DecodeErr == nil || string(d.Raw) != `"not a number"` || d.Attempts != 0 || d.Err == nil {
		t.Errorf("dead letter = %+v, want the raw payload, a decode error and no attempt", d)
	}
}

// TestDecodePanicDeadLetters stores a payload whose decoding panics ahead
// of a good one: the panic is the decode's error, the task is
// dead-lettered as undecodable and read back as such, and the good one
// runs. The panic took the process down, and every process after it that
// took the task up.
func TestDecodePanicDeadLetters(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	ran := make(chan string, 1)
	a, err := New(ctx, nc, "decodepanic", func(ctx context.Context, task actor.Task[testenv.Brittle]) error {
		ran <- task.Payload.V
		return nil
	}, Config[testenv.Brittle]{OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	for _, v := range []string{"boom", "fine"} {
		if _, err := a.Send(ctx, testenv.Brittle{V: v}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case v := <-ran:
		if v != "fine" {
			t.Errorf("ran %q, want fine", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the good task did not run")
	}
	var letters []DeadLetter[testenv.Brittle]
	eventually(t, 5*time.Second, "a dead letter", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{Reason: ReasonUndecodable})
		return err == nil && len(letters) == 1
	})
	var pe *actor.PanicError
	if d := letters[0]; !errors.As(d.DecodeErr, &pe) || d.Err == nil || !strings.Contains(d.Err.Error(), "brittle: unexpected value") {
		t.Errorf("dead letter = %+v, want the decode's panic as its error", d)
	}
}
