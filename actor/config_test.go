package actor

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		name  string
		cfg   Config[int]
		field string // the field the error must name; "" for a valid config
		rule  string // a part of the rule it must state
	}{
		{"zero value", Config[int]{}, "", ""},
		{"fixed", Config[int]{Workers: 4, Capacity: 10}, "", ""},
		{"elastic", Config[int]{MinWorkers: 1, MaxWorkers: 4, KeepAlive: time.Second}, "", ""},
		{"elastic from zero", Config[int]{MaxWorkers: 4}, "", ""},
		{"elastic min equals max", Config[int]{MinWorkers: 2, MaxWorkers: 2}, "", ""},
		{"retries with defaults", Config[int]{MaxAttempts: 3}, "", ""},
		{"drop oldest bounded", Config[int]{Capacity: 1, Overflow: OverflowDropOldest}, "", ""},
		{"full backoff", Config[int]{MaxAttempts: 5, Backoff: Backoff{Initial: time.Millisecond, Max: time.Second, Multiplier: 1.5, Jitter: 1}}, "", ""},

		{"negative workers", Config[int]{Workers: -1}, "Workers", "must not be negative"},
		{"negative min", Config[int]{MinWorkers: -1, MaxWorkers: 2}, "MinWorkers", "must not be negative"},
		{"negative capacity", Config[int]{Capacity: -1}, "Capacity", "must not be negative"},
		{"negative attempts", Config[int]{MaxAttempts: -2}, "MaxAttempts", "must not be negative"},
		{"negative timeout", Config[int]{Timeout: -time.Second}, "Timeout", "must not be negative"},
		{"negative grace", Config[int]{Grace: -time.Second}, "Grace", "must not be negative"},
		{"fixed and elastic", Config[int]{Workers: 2, MaxWorkers: 4}, "Workers", "not both"},
		{"min without max", Config[int]{MinWorkers: 2}, "MaxWorkers", "when MinWorkers is set"},
		{"min above max", Config[int]{MinWorkers: 5, MaxWorkers: 3}, "MinWorkers", "must not exceed MaxWorkers (3)"},
		{"keep-alive on a fixed actor", Config[int]{Workers: 2, KeepAlive: time.Second}, "KeepAlive", "elastic"},
		{"unknown overflow", Config[int]{Capacity: 1, Overflow: 9}, "Overflow", "unknown"},
		{"reject unbounded", Config[int]{Overflow: OverflowReject}, "Overflow", "bounded"},
		{"drop oldest unbounded", Config[int]{Overflow: OverflowDropOldest}, "Overflow", "bounded"},
		{"drop newest unbounded", Config[int]{Overflow: OverflowDropNewest}, "Overflow", "bounded"},
		{"backoff without retries", Config[int]{Backoff: Backoff{Initial: time.Second}}, "Backoff", "no task is retried"},
		{"initial above max", Config[int]{MaxAttempts: 2, Backoff: Backoff{Initial: time.Minute, Max: time.Second}}, "Backoff.Initial", "must not exceed Backoff.Max"},
		{"shrinking multiplier", Config[int]{MaxAttempts: 2, Backoff: Backoff{Multiplier: 0.5}}, "Backoff.Multiplier", "must be at least 1"},
		{"jitter above one", Config[int]{MaxAttempts: 2, Backoff: Backoff{Jitter: 1.5}}, "Backoff.Jitter", "must be between 0 and 1"},
		{"negative jitter", Config[int]{MaxAttempts: 2, Backoff: Backoff{Jitter: -0.1}}, "Backoff.Jitter", "must be between 0 and 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.field || !strings.Contains(ce.Rule, tt.rule) {
				t.Errorf("Validate() = %v; want field %s and a rule containing %q", err, tt.field, tt.rule)
			}
			if !strings.Contains(err.Error(), "actor: Config."+tt.field+" is ") {
				t.Errorf("message %q does not name Config.%s", err, tt.field)
			}
			// New refuses the same config and says why.
			if _, nerr := New("bad", func(context.Context, Task[int]) error { return nil }, tt.cfg); !errors.As(nerr, &ce) {
				t.Errorf("New accepted an invalid config: %v", nerr)
			}
		})
	}
}

// TestConfigValidateHuge checks that Validate refuses the sizes that New
// allocates up front when they are too large to allocate, so that a typo
// in a configuration file is a *ConfigError rather than a crash of New.
func TestConfigValidateHuge(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		name  string
		cfg   Config[int]
		field string
	}{
		{"capacity", Config[int]{Capacity: math.MaxInt}, "Capacity"},
		{"capacity past the limit", Config[int]{Capacity: CapacityLimit + 1}, "Capacity"},
		{"workers", Config[int]{Workers: math.MaxInt}, "Workers"},
		{"min workers", Config[int]{MinWorkers: math.MaxInt, MaxWorkers: math.MaxInt}, "MinWorkers"},
		{"max workers", Config[int]{MaxWorkers: WorkersLimit + 1}, "MaxWorkers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ce *ConfigError
			err := tt.cfg.Validate()
			if !errors.As(err, &ce) || ce.Field != tt.field || !strings.Contains(ce.Rule, "must not exceed") {
				t.Fatalf("Validate() = %v, want a *ConfigError on %s saying what it must not exceed", err, tt.field)
			}
			a, err := New("huge", func(context.Context, Task[int]) error { return nil }, tt.cfg)
			if err == nil {
				a.Stop()
				t.Fatal("New accepted the config")
			}
		})
	}
	for _, cfg := range []Config[int]{{Capacity: CapacityLimit}, {Workers: 2, Capacity: 1}, {MaxWorkers: WorkersLimit}} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", cfg, err)
		}
	}
}

func TestConfigValidateReportsEveryField(t *testing.T) {
	noLeaks(t)
	err := (&Config[int]{Workers: -1, Capacity: -1, Grace: -1}).Validate()
	for _, field := range []string{"Workers", "Capacity", "Grace"} {
		if !strings.Contains(err.Error(), "Config."+field+" is -1") {
			t.Errorf("Validate() = %v; does not name %s", err, field)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		name string
		cfg  Config[int]
		want settings
	}{
		{"zero value", Config[int]{}, settings{min: 1, max: 1, maxAttempts: 1, grace: defaultGrace}},
		{"fixed", Config[int]{Workers: 3}, settings{min: 3, max: 3, maxAttempts: 1, grace: defaultGrace}},
		{"elastic", Config[int]{MaxWorkers: 4}, settings{min: 0, max: 4, keepAlive: defaultKeepAlive, maxAttempts: 1, grace: defaultGrace}},
		{"retries", Config[int]{MaxAttempts: 3}, settings{min: 1, max: 1, maxAttempts: 3, grace: defaultGrace,
			backoff: Backoff{Initial: defaultInitial, Max: defaultMaxDelay, Multiplier: defaultMultiplier}}},
		{"initial above default max", Config[int]{MaxAttempts: 3, Backoff: Backoff{Initial: time.Minute}}, settings{min: 1, max: 1, maxAttempts: 3, grace: defaultGrace,
			backoff: Backoff{Initial: time.Minute, Max: time.Minute, Multiplier: defaultMultiplier}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.settings(); got != tt.want {
				t.Errorf("settings() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	noLeaks(t)
	if _, err := New("", func(context.Context, Task[int]) error { return nil }, Config[int]{}); err == nil {
		t.Error("New accepted an empty name")
	}
	if _, err := New[int]("x", nil, Config[int]{}); err == nil || !strings.Contains(err.Error(), "handler") {
		t.Errorf("New with a nil handler = %v, want an error about the handler", err)
	}
}
