package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDeploymentName(t *testing.T) {
	long := "ip-10-0-101-123." + strings.Repeat("a", 60) + ".compute.internal"
	cases := map[string]struct {
		ids, node string
		want      string
	}{
		"short":                  {ids: "nginx", node: "w1", want: "nginx-w1"},
		"exactly 63":             {ids: strings.Repeat("x", 30), node: strings.Repeat("y", 32), want: strings.Repeat("x", 30) + "-" + strings.Repeat("y", 32)},
		"long node is shortened": {ids: "nginx-ingress", node: long, want: Shorten("nginx-ingress-"+long, 63)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DeploymentName(tc.ids, tc.node)
			if got != tc.want {
				t.Fatalf("DeploymentName = %q, want %q", got, tc.want)
			}
			if len(got) > MaxNameLength {
				t.Fatalf("%q is longer than %d", got, MaxNameLength)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Fatalf("%q is no valid name: %v", got, errs)
			}
			if errs := validation.IsValidLabelValue(LabelValue(tc.node)); len(errs) > 0 {
				t.Fatalf("label value for %q invalid: %v", tc.node, errs)
			}
		})
	}
	if DeploymentName("a", long+"1") == DeploymentName("a", long+"2") {
		t.Fatal("distinct long node names collide")
	}
}

func FuzzShorten(f *testing.F) {
	f.Add("nginx-w1", 63)
	f.Add(strings.Repeat("a.", 80), 63)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 12 || max > 253 {
			return
		}
		if got := Shorten(s, max); len(got) > max {
			t.Fatalf("Shorten(%q, %d) = %q, too long", s, max, got)
		}
	})
}

func TestHealthCheckerName(t *testing.T) {
	if got := HealthCheckerName("ingress-nginx", "nginx", 10080); got != "ingress-nginx.nginx-10080" {
		t.Errorf("HealthCheckerName = %q", got)
	}
	// Without the namespace's separator these two would share a name.
	if HealthCheckerName("a-b", "c", 1) == HealthCheckerName("a", "b-c", 1) {
		t.Error("namespace a-b/c and a/b-c share a health checker name")
	}
	long := HealthCheckerName(strings.Repeat("n", 63), strings.Repeat("i.", 100)+"x", 65535)
	if len(long) > MaxNameLength || len(validation.IsDNS1123Subdomain(long)) > 0 {
		t.Errorf("%q is no valid name of at most %d characters", long, MaxNameLength)
	}
	if HealthCheckerName("ns", strings.Repeat("i", 80)+"1", 1) == HealthCheckerName("ns", strings.Repeat("i", 80)+"2", 1) {
		t.Error("distinct long names collide")
	}
}
