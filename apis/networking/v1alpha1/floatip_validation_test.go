package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func validPool(name string) *networkingv1alpha1.FloatIPPool {
	return &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1alpha1.FloatIPPoolSpec{
			Ranges:      []string{"10.0.0.10~10.0.0.20", "10.0.0.30", "10.0.0.64/28"},
			Subnet:      "10.0.0.0/24",
			Gateway:     "10.0.0.1",
			NodeSubnets: []string{"192.168.0.0/24"},
			ExcludeIPs:  []string{"10.0.0.15"},
		},
	}
}

func validFIP(ip string) *networkingv1alpha1.FloatIP {
	return &networkingv1alpha1.FloatIP{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(ip, ".", "-")},
		Spec:       networkingv1alpha1.FloatIPSpec{IP: ip, Pool: "p", Key: "sts_default_web_web-0"},
	}
}

// TestFloatIPCreateValidation proves each rule rejects a bad object and lets a good one through.
func TestFloatIPCreateValidation(t *testing.T) {
	cases := map[string]struct {
		obj     client.Object
		wantErr string // empty: must be accepted
	}{
		"valid pool": {obj: validPool("ok")},
		"valid pool with size and preAllocate": {obj: func() client.Object {
			p := validPool("ok-size")
			p.Spec.Size = ptr.To[int32](3)
			p.Spec.PreAllocate = true
			p.Spec.ReleasePolicy = networkingv1alpha1.ReleasePolicyNever
			return p
		}()},
		"range outside subnet": {obj: func() client.Object {
			p := validPool("outside")
			p.Spec.Ranges = []string{"10.0.1.5"}
			return p
		}(), wantErr: "every range must be an IP, a CIDR or 'first~last' inside subnet"},
		"range end outside subnet": {obj: func() client.Object {
			p := validPool("outside-end")
			p.Spec.Ranges = []string{"10.0.0.5~10.0.1.5"}
			return p
		}(), wantErr: "inside subnet"},
		"garbage range": {obj: func() client.Object {
			p := validPool("garbage")
			p.Spec.Ranges = []string{"ten"}
			return p
		}(), wantErr: "inside subnet"},
		"CIDR range larger than subnet": {obj: func() client.Object {
			p := validPool("bigcidr")
			p.Spec.Ranges = []string{"10.0.0.0/16"}
			return p
		}(), wantErr: "inside subnet"},
		"subnet not a CIDR": {obj: func() client.Object {
			p := validPool("badsubnet")
			p.Spec.Subnet = "10.0.0.0"
			return p
		}(), wantErr: "subnet must be a CIDR"},
		"gateway outside subnet": {obj: func() client.Object {
			p := validPool("badgw")
			p.Spec.Gateway = "10.9.0.1"
			return p
		}(), wantErr: "gateway must be inside subnet"},
		"node subnet not a CIDR": {obj: func() client.Object {
			p := validPool("badnode")
			p.Spec.NodeSubnets = []string{"192.168.0.1"}
			return p
		}(), wantErr: "every nodeSubnets entry must be a CIDR"},
		"no node subnets": {obj: func() client.Object {
			p := validPool("nonode")
			p.Spec.NodeSubnets = nil
			return p
		}(), wantErr: "a pool with ranges needs subnet and nodeSubnets"},
		"valid sharing group without ranges": {obj: &networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: "group"},
			Spec:       networkingv1alpha1.FloatIPPoolSpec{Size: ptr.To[int32](4), PreAllocate: true},
		}},
		"bad exclude": {obj: func() client.Object {
			p := validPool("badexcl")
			p.Spec.ExcludeIPs = []string{"x~y"}
			return p
		}(), wantErr: "every excludeIPs entry must be an IP, a CIDR or 'first~last'"},
		"vlan out of range": {obj: func() client.Object {
			p := validPool("badvlan")
			p.Spec.Vlan = 5000
			return p
		}(), wantErr: "spec.vlan"},
		"preAllocate without size": {obj: func() client.Object {
			p := validPool("prealloc")
			p.Spec.PreAllocate = true
			return p
		}(), wantErr: "preAllocate requires size"},
		"unknown release policy": {obj: func() client.Object {
			p := validPool("badpolicy")
			p.Spec.ReleasePolicy = "sometimes"
			return p
		}(), wantErr: "spec.releasePolicy"},
		"pool name too long for a label": {obj: validPool(strings.Repeat("a", 64)), wantErr: "pool name must be at most 63 characters"},

		"valid FloatIP": {obj: validFIP("10.0.0.11")},
		"valid IPv6 FloatIP": {obj: func() client.Object {
			f := validFIP("fd00::5")
			f.Name = "fd00-0000-0000-0000-0000-0000-0000-0005"
			return f
		}()},
		"FloatIP name not derived from the IP": {obj: func() client.Object {
			f := validFIP("10.0.0.12")
			f.Name = "10-0-0-13"
			return f
		}(), wantErr: "name must be the IP with dots replaced by dashes"},
		"FloatIP with a bad IP": {obj: func() client.Object {
			f := validFIP("10.0.0.12")
			f.Spec.IP = "10.0.0.300"
			f.Name = "10-0-0-300"
			return f
		}(), wantErr: "ip must be an IP address"},
		"FloatIP without pool": {obj: func() client.Object {
			f := validFIP("10.0.0.14")
			f.Spec.Pool = ""
			return f
		}(), wantErr: "spec.pool"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := testenv.Context(t)
			err := env.Client.Create(ctx, tc.obj)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, tc.obj) })
				return
			}
			if err == nil {
				_ = env.Client.Delete(ctx, tc.obj)
				t.Fatalf("create succeeded, want error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("create error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestFloatIPImmutableFields proves ip and pool cannot change after creation.
func TestFloatIPImmutableFields(t *testing.T) {
	ctx := testenv.Context(t)
	f := validFIP("10.0.0.40")
	if err := env.Client.Create(ctx, f); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, f) })

	f.Spec.Pool = "other"
	if err := env.Client.Update(ctx, f); err == nil || !strings.Contains(err.Error(), "pool is immutable") {
		t.Fatalf("changing pool: err = %v, want pool is immutable", err)
	}
	f.Spec.Pool = "p"
	f.Spec.IP = "10.0.0.41"
	if err := env.Client.Update(ctx, f); err == nil || !strings.Contains(err.Error(), "ip is immutable") {
		t.Fatalf("changing ip: err = %v, want ip is immutable", err)
	}
	// The key may change: that is how an IP is reserved for a workload.
	f.Spec.IP = "10.0.0.40"
	f.Spec.Key = "dp_default_web_"
	if err := env.Client.Update(ctx, f); err != nil {
		t.Fatalf("changing key: %v", err)
	}
}

// TestFloatIPAllocationIsExclusive proves that the API server refuses a
// second FloatIP for the same IP: the correctness core of allocation.
func TestFloatIPAllocationIsExclusive(t *testing.T) {
	ctx := testenv.Context(t)
	a := validFIP("10.0.0.50")
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, a) })
	b := validFIP("10.0.0.50")
	b.Spec.Key = "sts_default_web_web-1"
	if err := env.Client.Create(ctx, b); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second create: err = %v, want already exists", err)
	}
}

// TestFloatIPPoolLedgerBounds: the API server refuses a FloatIPPoolLedger
// past its bounds (1024 claims, 4096 ranges and excludeIPs entries in
// all), whoever writes it: far below etcd's object size limit, which about
// 30 maximal claims would pass. The pool reconciler keeps to the same
// bounds (MaxFloatIPPoolClaims, MaxFloatIPPoolClaimEntries).
func TestFloatIPPoolLedgerBounds(t *testing.T) {
	ctx := testenv.Context(t)
	claims := func(n, entriesEach int) []networkingv1alpha1.FloatIPPoolClaim {
		out := make([]networkingv1alpha1.FloatIPPoolClaim, n)
		for i := range out {
			out[i] = networkingv1alpha1.FloatIPPoolClaim{Pool: fmt.Sprintf("p%d", i), UID: fmt.Sprintf("uid-%d", i)}
			for j := range entriesEach {
				ip := fmt.Sprintf("10.%d.%d.%d", i/250, i%250, 1+j)
				if j%2 == 0 {
					out[i].Ranges = append(out[i].Ranges, ip)
				} else {
					out[i].ExcludeIPs = append(out[i].ExcludeIPs, ip)
				}
			}
		}
		return out
	}
	const maxClaims, maxEntries = networkingv1alpha1.MaxFloatIPPoolClaims, networkingv1alpha1.MaxFloatIPPoolClaimEntries
	extra := networkingv1alpha1.FloatIPPoolClaim{Pool: "extra", UID: "uid-extra", Ranges: []string{"10.255.0.1"}}
	for _, tc := range []struct {
		name   string
		claims []networkingv1alpha1.FloatIPPoolClaim
		ok     bool
	}{
		// The bounds the manager keeps to (the constants) are the CRD's.
		{"at both bounds", claims(maxClaims, maxEntries/maxClaims), true},
		{"one claim more", claims(maxClaims+1, 1), false},
		{"one entry more", append(claims(maxEntries/256, 256), extra), false},
	} {
		l := &networkingv1alpha1.FloatIPPoolLedger{ObjectMeta: metav1.ObjectMeta{Name: networkingv1alpha1.FloatIPPoolLedgerName}}
		l.Spec.Claims = tc.claims
		err := env.Client.Create(ctx, l)
		if (err == nil) != tc.ok {
			t.Errorf("%s: create error %v, want accepted %v", tc.name, err, tc.ok)
		}
		if err == nil {
			if err := env.Client.Delete(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
	}
}
