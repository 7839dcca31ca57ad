package actorpool

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string // "" when valid
		rule  string
	}{
		{"minimal", Config{MaxObjects: 1}, "", ""},
		{"everything", Config{MaxObjects: 8, MinIdle: 8, MaxIdleTime: time.Minute, MaxLifetime: time.Hour,
			MaxQueueSize: 10, CreateTimeout: time.Second, TestTimeout: time.Second,
			ValidationInterval: time.Second, LeakThreshold: time.Second}, "", ""},
		{"zero MaxObjects", Config{}, "MaxObjects", "between 1 and"},
		{"huge MaxObjects", Config{MaxObjects: MaxObjectsLimit + 1}, "MaxObjects", "between 1 and"},
		{"negative MinIdle", Config{MaxObjects: 1, MinIdle: -1}, "MinIdle", "negative"},
		{"MinIdle over MaxObjects", Config{MaxObjects: 2, MinIdle: 3}, "MinIdle", "must not exceed MaxObjects (2)"},
		{"negative MaxQueueSize", Config{MaxObjects: 1, MaxQueueSize: -1}, "MaxQueueSize", "zero means no limit"},
		{"negative MaxIdleTime", Config{MaxObjects: 1, MaxIdleTime: -1}, "MaxIdleTime", "zero means no limit"},
		{"negative MaxLifetime", Config{MaxObjects: 1, MaxLifetime: -1}, "MaxLifetime", "zero means no limit"},
		{"negative CreateTimeout", Config{MaxObjects: 1, CreateTimeout: -1}, "CreateTimeout", "zero means the default, 30s"},
		{"negative TestTimeout", Config{MaxObjects: 1, TestTimeout: -1}, "TestTimeout", "zero means the default, 5s"},
		{"negative ValidationInterval", Config{MaxObjects: 1, ValidationInterval: -1}, "ValidationInterval", "zero means never"},
		{"negative LeakThreshold", Config{MaxObjects: 1, LeakThreshold: -1}, "LeakThreshold", "zero means never"},
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
			if ce.Field != tt.field {
				t.Errorf("field = %q, want %q", ce.Field, tt.field)
			}
			if !strings.Contains(err.Error(), "Config."+tt.field) || !strings.Contains(err.Error(), tt.rule) {
				t.Errorf("error %q does not name Config.%s and the rule %q", err, tt.field, tt.rule)
			}
			if _, err := New[*conn](&factory{}, tt.cfg); err == nil {
				t.Error("New accepted the invalid config")
			}
		})
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	err := Config{MinIdle: -1, MaxQueueSize: -1}.Validate()
	for _, field := range []string{"MaxObjects", "MinIdle", "MaxQueueSize"} {
		if !strings.Contains(err.Error(), "Config."+field) {
			t.Errorf("error %q does not mention %s", err, field)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 3})
	cfg := p.Config()
	if cfg.Name != "actorpool" || cfg.CreateTimeout != DefaultCreateTimeout || cfg.TestTimeout != DefaultTestTimeout || cfg.Logger == nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
}
