package translate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

const config = `[
 {"routableSubnet":"10.49.27.0/24","ips":["10.49.27.205","10.49.27.216~10.49.27.218"],"subnet":"10.49.27.0/24","gateway":"10.49.27.1","vlan":2},
 {"nodeSubnets":["10.173.13.0/24","10.173.14.0/24"],"ips":["10.173.13.15~10.173.13.20"],"subnet":"10.173.13.0/24","gateway":"10.173.13.1"}
]`

func TestPoolsFromConfig(t *testing.T) {
	pools, err := PoolsFromConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"galaxy-10-49-27-0-24-10-49-27-205", "galaxy-10-173-13-0-24-10-173-13-15"}, names); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10.49.27.0/24"}, pools[0].Spec.NodeSubnets); diff != "" {
		t.Fatalf("routableSubnet not used as nodeSubnets:\n%s", diff)
	}
	if pools[0].Spec.Vlan != 2 || pools[1].Spec.Gateway != "10.173.13.1" || len(pools[1].Spec.NodeSubnets) != 2 {
		t.Fatalf("specs = %+v", pools)
	}
	for _, bad := range []string{`{`, `[{"ips":["10.0.0.1"],"subnet":"10.0.0.0/24"}]`, `[{"nodeSubnets":["1.0.0.0/8"],"ips":["x"],"subnet":"10.0.0.0/24"}]`} {
		if _, err := PoolsFromConfig(bad); err == nil {
			t.Errorf("PoolsFromConfig(%s) succeeded", bad)
		}
	}
}

func TestFloatIPFromGalaxy(t *testing.T) {
	pools, _ := PoolsFromConfig(config)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]struct {
		in        GalaxyFloatingIP
		wantPool  string
		wantPhase networkingv1alpha1.FloatIPPhase
		wantPol   networkingv1alpha1.ReleasePolicy
		wantPod   string
		wantErr   bool
	}{
		"bound sts pod": {
			in:       GalaxyFloatingIP{Name: "10.49.27.216", Key: "sts_default_web_web-0", Attribute: `{"NodeName":"n1","Uid":"u1"}`, Policy: 1, UpdateTime: now},
			wantPool: "galaxy-10-49-27-0-24-10-49-27-205", wantPhase: networkingv1alpha1.FloatIPAllocated, wantPol: networkingv1alpha1.ReleasePolicyImmutable, wantPod: "web-0",
		},
		"deployment reservation": {
			in:       GalaxyFloatingIP{Name: "10.173.13.16", Key: "dp_default_api_", Policy: 2, UpdateTime: now},
			wantPool: "galaxy-10-173-13-0-24-10-173-13-15", wantPhase: networkingv1alpha1.FloatIPReserved, wantPol: networkingv1alpha1.ReleasePolicyNever,
		},
		"kept sts ip without pod": {
			in:       GalaxyFloatingIP{Name: "10.49.27.205", Key: "sts_default_web_web-1", Policy: 2, UpdateTime: now},
			wantPool: "galaxy-10-49-27-0-24-10-49-27-205", wantPhase: networkingv1alpha1.FloatIPReserved, wantPol: networkingv1alpha1.ReleasePolicyNever,
		},
		"ip outside config": {in: GalaxyFloatingIP{Name: "10.1.1.1", Key: "x"}, wantErr: true},
		"not an ip":         {in: GalaxyFloatingIP{Name: "abc"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := FloatIPFromGalaxy(tc.in, pools)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if f.Spec.Pool != tc.wantPool || f.Status.Phase != tc.wantPhase || f.Spec.ReleasePolicy != tc.wantPol || f.Status.PodName != tc.wantPod || f.Spec.Key != tc.in.Key {
				t.Fatalf("got %+v %+v", f.Spec, f.Status)
			}
			if f.Labels[networkingv1alpha1.LabelFloatIPPool] != tc.wantPool {
				t.Fatalf("labels %v", f.Labels)
			}
		})
	}
}

func TestOrphansAreReportedNotDropped(t *testing.T) {
	pools, _ := PoolsFromConfig(config)
	fips := []networkingv1alpha1.FloatIP{
		{Spec: networkingv1alpha1.FloatIPSpec{IP: "10.49.27.217"}},
		{Spec: networkingv1alpha1.FloatIPSpec{IP: "10.49.27.230"}},
	}
	if diff := cmp.Diff([]string{"10.49.27.230"}, Orphans(fips, pools)); diff != "" {
		t.Fatalf("orphans (-want +got):\n%s", diff)
	}
}

func FuzzPoolsFromConfig(f *testing.F) {
	f.Add(config)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = PoolsFromConfig(s)
	})
}
