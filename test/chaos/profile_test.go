package chaos

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

func TestProfiles(t *testing.T) {
	for _, name := range []string{"", "ci", "full"} {
		p, err := LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Duration <= 0 || p.Converge <= 0 || p.LeaderKill.Min <= 0 || p.MaxEIPPods <= 0 {
			t.Errorf("profile %q is incomplete: %+v", name, p)
		}
		// Every pod the run may create draws from one /24 of kwok pod IPs.
		if pods := p.MaxEIPPods + 2*p.MaxBurstReplicas + 3*p.MaxFloatReplicas + 2*(3+p.MaxIngressJoins); pods > 200 {
			t.Errorf("profile %q may run %d pods", name, pods)
		}
	}
	if _, err := LookupProfile("nope"); err == nil {
		t.Error("an unknown profile was accepted")
	}
}

func TestFaultSetsAreValid(t *testing.T) {
	for _, fs := range FaultSets {
		var specs []core.FaultSpec
		if err := json.Unmarshal([]byte(fs.Specs), &specs); err != nil {
			t.Errorf("%s: %v", fs.Name, err)
			continue
		}
		for _, s := range specs {
			if err := s.Validate(); err != nil {
				t.Errorf("%s: %v", fs.Name, err)
			}
		}
	}
}

func TestSpanPick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := Span{time.Second, 3 * time.Second}
	for range 100 {
		if d := s.Pick(r); d < s.Min || d > s.Max {
			t.Fatalf("picked %s outside %v", d, s)
		}
	}
	if d := (Span{Min: time.Second}).Pick(r); d != time.Second {
		t.Errorf("a fixed span picked %s", d)
	}
}
