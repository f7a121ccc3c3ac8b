package floatippool

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestPoolValidator: overlapping pools are rejected, and an edit cannot
// drop IPs in use.
func TestPoolValidator(t *testing.T) {
	f := newFixture(t, "webhook", []string{"10.0.9.1~10.0.9.10"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	v := &PoolValidator{Reader: env.Client}
	p := f.pod("w", nil, nil)
	if msg := f.bind(p, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	var current networkingv1alpha1.FloatIPPool
	must(t, env.Client.Get(f.ctx, client.ObjectKeyFromObject(f.pool), &current))

	other := func(ranges ...string) *networkingv1alpha1.FloatIPPool {
		return &networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: "webhook-other"},
			Spec:       networkingv1alpha1.FloatIPPoolSpec{Ranges: ranges, Subnet: "10.0.0.0/16", NodeSubnets: []string{"192.168.1.0/24"}},
		}
	}
	cases := map[string]struct {
		old, new *networkingv1alpha1.FloatIPPool
		wantErr  string
	}{
		"disjoint pool":        {new: other("10.0.9.11~10.0.9.20")},
		"overlapping pool":     {new: other("10.0.9.10~10.0.9.20"), wantErr: "overlaps FloatIPPool webhook: IPs 10.0.9.10 are in both"},
		"overlapping CIDR":     {new: other("10.0.9.0/28"), wantErr: "overlaps FloatIPPool webhook"},
		"ranges overlap":       {new: other("10.0.9.30~10.0.9.40", "10.0.9.35"), wantErr: "overlap"},
		"sharing group":        {new: &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: "g"}}},
		"grow":                 {old: &current, new: withRanges(&current, "10.0.9.1~10.0.9.11")},
		"shrink around in use": {old: &current, new: withRanges(&current, "10.0.9.1~10.0.9.2")},
		"shrink below in use":  {old: &current, new: withRanges(&current, "10.0.9.2~10.0.9.10"), wantErr: "drop IPs that are in use (10.0.9.1)"},
		"exclude in use":       {old: &current, new: withExclude(&current, "10.0.9.1"), wantErr: "drop IPs that are in use (10.0.9.1)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.old == nil {
				_, err = v.ValidateCreate(f.ctx, tc.new)
			} else {
				_, err = v.ValidateUpdate(f.ctx, tc.old, tc.new)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if w, err := v.ValidateDelete(f.ctx, &current); err != nil || len(w) != 1 {
		t.Fatalf("delete in use: warnings %v err %v", w, err)
	}
}

func withRanges(p *networkingv1alpha1.FloatIPPool, ranges ...string) *networkingv1alpha1.FloatIPPool {
	n := p.DeepCopy()
	n.Spec.Ranges = ranges
	return n
}

func withExclude(p *networkingv1alpha1.FloatIPPool, ex ...string) *networkingv1alpha1.FloatIPPool {
	n := p.DeepCopy()
	n.Spec.ExcludeIPs = ex
	return n
}
