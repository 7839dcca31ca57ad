package jsactor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// provision creates the actor's streams and consumers, or checks those
// that exist, and returns the work stream.
func provision(ctx context.Context, js jetstream.JetStream, l layout, s *settings) (jetstream.Stream, error) {
	work := jetstream.StreamConfig{
		Name:        l.workStream(),
		Description: "actorpool: the tasks of actor " + l.actor,
		Subjects:    []string{l.places(placeReady), l.places(placeDelayed), l.places(placeBackoff)},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    s.replicas,
		Duplicates:  s.dedup,
		AllowDirect: true,
	}
	dead := jetstream.StreamConfig{
		Name:        l.deadStream(),
		Description: "actorpool: the dead letters of actor " + l.actor,
		Subjects:    []string{l.deadSubject()},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    s.replicas,
		Duplicates:  s.dedup,
		AllowDirect: true,
	}
	counts := jetstream.StreamConfig{
		Name:              l.countStream(),
		Description:       "actorpool: the counters of actor " + l.actor,
		Subjects:          []string{l.countSubject("*")},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		Replicas:          s.replicas,
		MaxMsgsPerSubject: 1,
		AllowMsgCounter:   true,
		AllowDirect:       true,
	}
	var stream jetstream.Stream
	for _, cfg := range []jetstream.StreamConfig{work, dead, counts} {
		st, err := ensureStream(ctx, js, cfg)
		if err != nil {
			return nil, err
		}
		if cfg.Name == work.Name {
			stream = st
		}
	}
	for _, c := range []struct{ name, filter string }{
		{consumerRun, l.places(placeReady)},
		{consumerDelayed, l.places(placeDelayed)},
		{consumerBackoff, l.places(placeBackoff)},
	} {
		// An ack wait is lengthened, never shortened: the processes of the
		// actor that run with a longer Lease prove and renew their leases
		// for as long, and a shorter ack wait would give their running
		// tasks to other workers, no handler told
		// (TestShorterLeaseElsewhereKeepsAckWait).
		ackWait := s.lease
		have, err := stream.Consumer(ctx, c.name)
		switch {
		case err == nil:
			ackWait = max(ackWait, have.CachedInfo().Config.AckWait)
		case !errors.Is(err, jetstream.ErrConsumerNotFound):
			return nil, fmt.Errorf("jsactor: actor %q: consumer %q of stream %q: %w", l.actor, c.name, work.Name, err)
		}
		_, err = stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       c.name,
			Description:   "actorpool: " + c.name + " of actor " + l.actor,
			FilterSubject: c.filter,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       ackWait,
			MaxDeliver:    -1,
			MaxAckPending: -1,
			MaxWaiting:    4096,
		})
		if err != nil {
			return nil, fmt.Errorf("jsactor: actor %q: consumer %q of stream %q: %w", l.actor, c.name, work.Name, badConsumer(err))
		}
	}
	return stream, nil
}

// badConsumer marks the server's refusal of a consumer that a work-queue
// stream cannot hold beside another — one made by hand that reads the
// same subjects — as ErrBadStream.
func badConsumer(err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.Code == 400 { // a consumer exists, filters overlap, …
		return fmt.Errorf("%w: %w", ErrBadStream, err)
	}
	return err
}

// ensureStream creates the stream cfg describes, or checks that the one
// of its name can serve: the same retention and subjects, and counting
// where cfg counts. Other settings of an existing stream — replicas,
// limits — are the operator's and are kept.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = js.Stream(ctx, cfg.Name) // another process made it first
		}
	}
	if err != nil {
		return nil, fmt.Errorf("jsactor: stream %q: %w", cfg.Name, err)
	}
	have := st.CachedInfo().Config
	switch {
	case have.Retention != cfg.Retention:
		return nil, fmt.Errorf("jsactor: %w: stream %q has retention %s, the actor needs %s: delete it or choose another Prefix",
			ErrBadStream, cfg.Name, have.Retention, cfg.Retention)
	case !sameSubjects(have.Subjects, cfg.Subjects):
		return nil, fmt.Errorf("jsactor: %w: stream %q has subjects %q, the actor needs %q: delete it or choose another Prefix",
			ErrBadStream, cfg.Name, have.Subjects, cfg.Subjects)
	case cfg.AllowMsgCounter && !have.AllowMsgCounter:
		return nil, fmt.Errorf("jsactor: %w: stream %q does not allow counters (allow_msg_counter), which the actor's counters need", ErrBadStream, cfg.Name)
	}
	return st, nil
}

func sameSubjects(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// apiCode returns the JetStream error code of err, or 0.
func apiCode(err error) jetstream.ErrorCode {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode
	}
	return 0
}
