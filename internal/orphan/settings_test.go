package orphan

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestSettingsFlags(t *testing.T) {
	s := DefaultSettings(10 * time.Minute)
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	s.BindFlags(fs, "kind", "addresses")
	if s.OrphanMaxDeletions != 100 {
		t.Errorf("default deletion cap %d, want 100", s.OrphanMaxDeletions)
	}
	if err := fs.Parse([]string{"--kind-orphan-mode=REPORT", "--kind-orphan-grace-period=1m", "--kind-orphan-interval=30s", "--kind-orphan-max-deletions=7"}); err != nil {
		t.Fatal(err)
	}
	want := Settings{OrphanMode: ModeReport, OrphanGracePeriod: time.Minute, OrphanInterval: 30 * time.Second, OrphanMaxDeletions: 7}
	if s != want {
		t.Errorf("parsed %+v, want %+v", s, want)
	}
	if err := fs.Parse([]string{"--kind-orphan-mode=sometimes"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

func TestSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Settings
		want string // "" = valid; otherwise the flag named
	}{
		{"defaults", DefaultSettings(time.Minute), ""},
		{"off needs no grace", Settings{OrphanMode: ModeOff, OrphanInterval: time.Minute, OrphanMaxDeletions: 1}, ""},
		{"unknown mode", Settings{OrphanMode: "maybe", OrphanInterval: time.Minute}, "--k-orphan-mode"},
		{"empty mode", Settings{OrphanInterval: time.Minute}, "--k-orphan-mode"},
		{"zero interval", Settings{OrphanMode: ModeDelete}, "--k-orphan-interval"},
		{"negative grace", Settings{OrphanMode: ModeDelete, OrphanInterval: time.Minute, OrphanGracePeriod: -time.Second, OrphanMaxDeletions: 1}, "--k-orphan-grace-period"},
		{"no deletion cap", Settings{OrphanMode: ModeDelete, OrphanInterval: time.Minute}, "--k-orphan-max-deletions"},
		{"negative deletion cap", Settings{OrphanMode: ModeDelete, OrphanInterval: time.Minute, OrphanMaxDeletions: -1}, "--k-orphan-max-deletions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate("k")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
