package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestParseFilter(t *testing.T) {
	f := func(name string, values ...string) networkingv1alpha1.AddressFilter {
		return networkingv1alpha1.AddressFilter{Name: name, Values: values}
	}
	cases := map[string]struct {
		in      string
		want    []networkingv1alpha1.AddressFilter
		wantErr string
	}{
		"empty":                 {in: "", want: nil},
		"kubeip's README":       {in: "Name=tag:env,Values=dev;Name=tag:app,Values=streamer", want: []networkingv1alpha1.AddressFilter{f("tag:env", "dev"), f("tag:app", "streamer")}},
		"several values":        {in: "Name=tag:env,Values=dev,test", want: []networkingv1alpha1.AddressFilter{f("tag:env", "dev", "test")}},
		"tag-key and public-ip": {in: " Name=tag-key,Values=kubeip ; Name=public-ip,Values=203.0.113.* ;", want: []networkingv1alpha1.AddressFilter{f("tag-key", "kubeip"), f("public-ip", "203.0.113.*")}},
		"allocation-id":         {in: "Name=allocation-id,Values=eipalloc-1,eipalloc-2", want: []networkingv1alpha1.AddressFilter{f("allocation-id", "eipalloc-1", "eipalloc-2")}},
		"a tag value with =":    {in: "Name=tag:k,Values=a=b", want: []networkingv1alpha1.AddressFilter{f("tag:k", "a=b")}},
		"association filter":    {in: "Name=instance-id,Values=i-1", wantErr: "describes where an address is associated"},
		"domain":                {in: "Name=domain,Values=vpc", wantErr: "a pool is filtered by"},
		"no Values":             {in: "Name=tag:env", wantErr: "want Name=<name>,Values="},
		"lower-case keys":       {in: "name=tag:env,values=dev", wantErr: "want Name=<name>,Values="},
		"empty values":          {in: "Name=tag:env,Values=,", wantErr: "has no values"},
		"tag without key":       {in: "Name=tag:,Values=x", wantErr: "a pool is filtered by"},
	}
	for name, tc := range cases {
		got, err := ParseFilter(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", name, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.wantErr == "":
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
			if back, _ := ParseFilter(FormatFilter(got)); !cmp.Equal(back, got) {
				t.Errorf("%s: FormatFilter does not round-trip: %q", name, FormatFilter(got))
			}
		}
	}
}

func TestParseOrderBy(t *testing.T) {
	ok := map[string]string{"": "PublicIp", "PublicIp": "PublicIp", "AllocationId": "AllocationId", "PublicIpv4Pool": "PublicIpv4Pool",
		"Tag:priority": "Tag:priority", "-Tag:priority": "-Tag:priority", " -PublicIp ": "-PublicIp"}
	for in, want := range ok {
		if got, err := ParseOrderBy(in); err != nil || got != want {
			t.Errorf("ParseOrderBy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"InstanceId", "AssociationId", "Domain", "PrivateIpAddress", "Tag:", "publicip"} {
		if _, err := ParseOrderBy(bad); err == nil {
			t.Errorf("ParseOrderBy(%q) accepted", bad)
		}
	}
}

func TestPool(t *testing.T) {
	a, err := Pool("", "")
	if err != nil || a.Mode != networkingv1alpha1.NodeElasticIPModeAuto || a.Pool != nil {
		t.Errorf("no filter: %+v, %v; want Auto", a, err)
	}
	if _, err := Pool("", "PublicIp"); err == nil {
		t.Error("an order without a filter accepted")
	}
	a, err = Pool("Name=tag:kubeip,Values=reserved", "-Tag:priority")
	if err != nil || a.Mode != networkingv1alpha1.NodeElasticIPModePool || a.Pool.OrderBy != "-Tag:priority" || len(a.Pool.Filters) != 1 {
		t.Errorf("pool: %+v, %v", a, err)
	}
}
