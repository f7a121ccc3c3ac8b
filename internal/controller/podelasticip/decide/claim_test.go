package decide

import (
	"maps"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// allowing is the policy of the flag value s, or the test fails.
func allowing(t *testing.T, s string) ClaimPolicy {
	t.Helper()
	p, err := ParseClaimPolicy(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// with is tags plus more.
func with(tags map[string]string, more map[string]string) map[string]string {
	out := maps.Clone(tags)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, more)
	return out
}

func TestParseClaimPolicy(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    string
		wantErr string
	}{
		"empty":                 {in: "", want: "none: --podelasticip-claimable-tags is empty"},
		"blank":                 {in: "  ", want: "none: --podelasticip-claimable-tags is empty"},
		"keys and values":       {in: "pec-ip-pool, team=edge ,tenant={namespace}", want: "--podelasticip-claimable-tags=pec-ip-pool,team=edge,tenant={namespace}"},
		"empty value":           {in: "pool=", want: "--podelasticip-claimable-tags=pool="},
		"empty key":             {in: "pool,=x", wantErr: "the key must be"},
		"empty item":            {in: "pool,,team", wantErr: "the key must be"},
		"key too long":          {in: strings.Repeat("k", 128), wantErr: "the key must be"},
		"value too long":        {in: "k=" + strings.Repeat("v", 256), wantErr: "the value must be"},
		"edgeplane's own tag":   {in: "edgeplane.io/cluster", wantErr: "reserved"},
		"edgeplane's own claim": {in: "networking.edgeplane.io/claim", wantErr: "reserved"},
		"the legacy tags":       {in: "aws-samples.github.com/aws-pod-eip-controller-pod", wantErr: "reserved"},
		"AWS's":                 {in: "aws:cloudformation:stack-name", wantErr: "reserved"},
		"twice":                 {in: "pool,pool", wantErr: "twice"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ParseClaimPolicy(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseClaimPolicy(%q) = %v, %v; want an error with %q", tc.in, p, err, tc.wantErr)
				}
				return
			}
			if err != nil || p.String() != tc.want {
				t.Fatalf("ParseClaimPolicy(%q) = %q, %v; want %q", tc.in, p, err, tc.want)
			}
		})
	}
}

func TestClaimPolicyAllows(t *testing.T) {
	p := allowing(t, "pec-ip-pool,team=edge,tenant={namespace}")
	cases := map[string]struct {
		tags map[string]string
		want bool
	}{
		"the key, any value":        {tags: map[string]string{"pec-ip-pool": "ns/web-0"}, want: true},
		"the key, empty value":      {tags: map[string]string{"pec-ip-pool": ""}, want: true},
		"the key and value":         {tags: map[string]string{"team": "edge"}, want: true},
		"the key, another value":    {tags: map[string]string{"team": "core"}},
		"the claimer's namespace":   {tags: map[string]string{"tenant": "ns"}, want: true},
		"another namespace":         {tags: map[string]string{"tenant": "other"}},
		"the placeholder itself":    {tags: map[string]string{"tenant": "{namespace}"}},
		"a console name":            {tags: map[string]string{"Name": "bastion"}},
		"no tags":                   {},
		"the key in another's case": {tags: map[string]string{"PEC-IP-POOL": ""}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := p.Allows(addr("eipalloc-1", tc.tags), "ns"); got != tc.want {
				t.Fatalf("Allows(%v) = %v, want %v", tc.tags, got, tc.want)
			}
		})
	}
	if (ClaimPolicy{}).Allows(addr("eipalloc-1", map[string]string{"pec-ip-pool": ""}), "ns") {
		t.Error("the empty policy allows a claim")
	}
}

func TestOwnedElsewhere(t *testing.T) {
	o := owner(static)
	ours := Tags(o)
	future := "2030-01-01T00:00:00Z"
	// Another tenant's Auto address in this cluster, as its PodElasticIP
	// tags it.
	tenantB := Tags(Owner{Cluster: "c1", UID: "uid-b", Namespace: "tenant-b", Pod: "web-0", Mode: auto})
	cases := map[string]struct {
		tags    map[string]string
		wantTag string
	}{
		"untagged":                           {},
		"a person's tags":                    {tags: map[string]string{"Name": "bastion", "pool-key": ""}},
		"our own":                            {tags: ours},
		"kept for our pod by an earlier one": {tags: with(Tags(Owner{Cluster: "c1", UID: "uid-old", Namespace: "ns", Pod: "web-0", Mode: static}), map[string]string{TagReleaseAfter: future})},
		"another tenant's Auto address":      {tags: tenantB, wantTag: TagNamespace},
		"another tenant's, kept":             {tags: with(tenantB, map[string]string{TagReleaseAfter: future}), wantTag: TagNamespace},
		"another cluster's":                  {tags: with(ours, map[string]string{TagCluster: "c2"}), wantTag: TagCluster},
		"another cluster's kept for our pod": {tags: with(ours, map[string]string{TagCluster: "c2", TagOwnerUID: "uid-x", TagReleaseAfter: future}), wantTag: TagCluster},
		"another kind's":                     {tags: map[string]string{TagCluster: "c1", TagOwnerKind: "NodeElasticIP", TagOwnerUID: "uid-n"}, wantTag: TagOwnerKind},
		"another PodElasticIP of ours":       {tags: with(ours, map[string]string{TagOwnerUID: "uid-2"}), wantTag: TagOwnerUID},
		"another pod's, no UID":              {tags: map[string]string{TagCluster: "c1", TagPod: "ns/web-1"}, wantTag: TagPod},
		"kept with no pod":                   {tags: map[string]string{TagReleaseAfter: future}, wantTag: TagReleaseAfter},
		"the legacy controller's, elsewhere": {tags: map[string]string{LegacyTagCluster: "legacy-of-another", LegacyTagPod: "ns/web-0"}, wantTag: LegacyTagCluster},
		"the legacy controller's, our pod":   {tags: map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0"}},
		"the legacy controller's, other pod": {tags: map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-1"}, wantTag: LegacyTagPod},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			why := OwnedElsewhere(addr("eipalloc-1", tc.tags), o)
			if (why == "") != (tc.wantTag == "") || (tc.wantTag != "" && !strings.Contains(why, "(tag "+tc.wantTag+")")) {
				t.Fatalf("OwnedElsewhere = %q, want one naming tag %q", why, tc.wantTag)
			}
			for k, v := range tc.tags {
				if len(v) > 2 && v != ours[k] && strings.Contains(why, v) {
					t.Errorf("the message %q shows another owner's value %q", why, v)
				}
			}
		})
	}
	// Legacy adoption off: any legacy cluster is another's.
	off := o
	off.LegacyCluster = ""
	if why := OwnedElsewhere(addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0"}), off); why == "" {
		t.Error("with legacy adoption off, the legacy controller's address is claimable")
	}
}

func TestCheckClaim(t *testing.T) {
	o := owner(pool)
	p := allowing(t, "pool-key")
	cases := map[string]struct {
		tags map[string]string
		want xpv2.ConditionReason
	}{
		"free and allowed":       {tags: map[string]string{"pool-key": ""}},
		"claimed by another":     {tags: map[string]string{"pool-key": "", TagClaim: "c2/ns/web-1", TagCluster: "c2"}, want: networkingv1alpha1.PodElasticIPReasonAddressInUse},
		"claimed by us":          {tags: with(Tags(o), map[string]string{"pool-key": ""})},
		"owned elsewhere":        {tags: map[string]string{"pool-key": "", TagNamespace: "other"}, want: networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere},
		"outside the policy":     {tags: map[string]string{"Name": "x"}, want: networkingv1alpha1.PodElasticIPReasonAddressNotAllowed},
		"owned and outside both": {tags: map[string]string{TagCluster: "c2"}, want: networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := CheckClaim(addr("eipalloc-1", tc.tags), o, p)
			if r.Reason != tc.want || r.Refused() != (tc.want != "") || (r.Refused() && !strings.Contains(r.Message, "eipalloc-1")) {
				t.Fatalf("CheckClaim = %+v, want reason %q", r, tc.want)
			}
		})
	}
}

func TestPoolCandidates(t *testing.T) {
	o := owner(pool)
	p := allowing(t, "pool-key")
	free1 := addr("eipalloc-1", map[string]string{"pool-key": ""})
	free2 := addr("eipalloc-2", map[string]string{"pool-key": "x"})
	busy := associated(addr("eipalloc-3", map[string]string{"pool-key": ""}), "10.0.0.9")
	claimed := addr("eipalloc-4", map[string]string{"pool-key": "", TagClaim: "c2/ns/web-1"})
	keptOther := addr("eipalloc-5", map[string]string{"pool-key": "", TagPod: "ns/web-9", TagReleaseAfter: "2030-01-01T00:00:00Z"})
	notPool := addr("eipalloc-6", nil)
	mine := addr("eipalloc-7", map[string]string{"pool-key": "", TagClaim: o.ClaimValue(), TagOwnerUID: "uid-1"})
	otherCluster := addr("eipalloc-8", with(Tags(Owner{Cluster: "c2", UID: "uid-x", Namespace: "ns", Pod: "web-0", Mode: pool}), map[string]string{
		"pool-key": "", TagReleaseAfter: "2030-01-01T00:00:00Z"}))
	otherTenant := addr("eipalloc-9", with(Tags(Owner{Cluster: "c1", UID: "uid-b", Namespace: "tenant-b", Pod: "web-0", Mode: auto}), map[string]string{"pool-key": ""}))
	pending := addr("eipalloc-10", map[string]string{"pool-key": ""})
	pending.Pending = PendingBinding
	got, refused := PoolCandidates([]Address{free1, free2, busy, claimed, keptOther, notPool, mine, otherCluster, otherTenant, pending}, o, p)
	if refused.Refused() {
		t.Fatalf("refused: %+v", refused)
	}
	ids := map[string]bool{}
	for _, a := range got {
		ids[a.AllocationID] = true
	}
	if diff := cmp.Diff(map[string]bool{"eipalloc-1": true, "eipalloc-2": true, "eipalloc-7": true}, ids); diff != "" {
		t.Fatalf("candidates (-want +got):\n%s", diff)
	}
	// Different claimers start on different addresses (deterministically).
	o2 := o
	o2.Pod, o2.UID = "web-1", "uid-2"
	first := map[string]bool{}
	for _, ow := range []Owner{o, o2, {Cluster: "c1", UID: "u3", Namespace: "ns", Pod: "web-2", TagKey: "pool-key", Mode: pool}} {
		c, _ := PoolCandidates([]Address{free1, free2}, ow, p)
		first[c[0].AllocationID] = true
	}
	if len(first) < 2 {
		t.Errorf("three claimers all start on the same address: %v", first)
	}

	// A pool key every console-named address carries: only what the
	// policy allows is a candidate.
	named := o
	named.TagKey = "Name"
	persons := addr("eipalloc-11", map[string]string{"Name": "bastion"})
	pooled := addr("eipalloc-12", map[string]string{"Name": "pool-1", "pool-key": ""})
	if c, r := PoolCandidates([]Address{persons, pooled}, named, p); r.Refused() || len(c) != 1 || c[0].AllocationID != "eipalloc-12" {
		t.Errorf("Pool on Name = %v, %+v; want only the allowed eipalloc-12", c, r)
	}
	if c, r := PoolCandidates([]Address{persons}, named, p); len(c) != 0 || r.Reason != networkingv1alpha1.PodElasticIPReasonAddressNotAllowed {
		t.Errorf("Pool on Name, only a person's address = %v, %+v; want AddressNotAllowed", c, r)
	}
	if c, r := PoolCandidates([]Address{free1}, o, ClaimPolicy{}); len(c) != 0 || r.Reason != networkingv1alpha1.PodElasticIPReasonAddressNotAllowed {
		t.Errorf("the empty policy = %v, %+v; want AddressNotAllowed", c, r)
	}
	if c, r := PoolCandidates([]Address{busy, claimed, otherCluster}, o, p); len(c) != 0 || r.Reason != networkingv1alpha1.PodElasticIPReasonPoolExhausted {
		t.Errorf("nothing free = %v, %+v; want PoolExhausted", c, r)
	}
}

func TestStaticCandidate(t *testing.T) {
	o := owner(static)
	byID := func() Owner { o := owner(static); o.TagKey, o.AllocationID = "", "eipalloc-abcdef12"; return o }()
	p := allowing(t, "pool-key,static-ok")
	tagged := addr("eipalloc-1", map[string]string{"pool-key": "ns/web-0"})
	tenantB := Tags(Owner{Cluster: "c1", UID: "uid-b", Namespace: "tenant-b", Pod: "web-0", Mode: auto})
	cases := map[string]struct {
		addrs      []Address
		o          Owner
		policy     ClaimPolicy
		wantID     string
		wantReason xpv2.ConditionReason
	}{
		"by tag value":               {addrs: []Address{tagged, addr("eipalloc-2", map[string]string{"pool-key": "ns/web-1"})}, o: o, policy: p, wantID: "eipalloc-1"},
		"missing":                    {addrs: []Address{addr("eipalloc-2", map[string]string{"pool-key": "ns/web-1"})}, o: o, policy: p, wantReason: "AddressNotFound"},
		"associated elsewhere":       {addrs: []Address{associated(tagged, "10.0.0.9")}, o: o, policy: p, wantReason: "AddressInUse"},
		"associated with the pod":    {addrs: []Address{associated(tagged, "10.0.0.5")}, o: o, policy: p, wantID: "eipalloc-1"},
		"claimed by another cluster": {addrs: []Address{addr("eipalloc-1", map[string]string{"pool-key": "ns/web-0", TagClaim: "c2/ns/web-0"})}, o: o, policy: p, wantReason: "AddressInUse"},
		"by allocation ID":           {addrs: []Address{addr("eipalloc-abcdef12", map[string]string{"static-ok": ""})}, o: byID, policy: p, wantID: "eipalloc-abcdef12"},
		"by ID, another tenant's Auto address": {addrs: []Address{addr("eipalloc-abcdef12", with(tenantB, map[string]string{"static-ok": ""}))}, o: byID, policy: p,
			wantReason: networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere},
		"by ID, another tenant's, associated": {addrs: []Address{associated(addr("eipalloc-abcdef12", with(tenantB, map[string]string{"static-ok": ""})), "10.0.0.9")}, o: byID, policy: p,
			wantReason: networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere},
		"by ID, another cluster's": {addrs: []Address{addr("eipalloc-abcdef12", map[string]string{TagCluster: "c2", "static-ok": ""})}, o: byID, policy: p,
			wantReason: networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere},
		"by ID, outside the policy": {addrs: []Address{addr("eipalloc-abcdef12", map[string]string{"Name": "bastion"})}, o: byID, policy: p,
			wantReason: networkingv1alpha1.PodElasticIPReasonAddressNotAllowed},
		"by tag value, the empty policy": {addrs: []Address{tagged}, o: o, wantReason: networkingv1alpha1.PodElasticIPReasonAddressNotAllowed},
		"the first refused, the second free": {addrs: []Address{addr("eipalloc-0", with(tenantB, map[string]string{"pool-key": "ns/web-0"})), tagged}, o: o, policy: p,
			wantID: "eipalloc-1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, refused := StaticCandidate(tc.addrs, tc.o, "10.0.0.5", tc.policy)
			if refused.Reason != tc.wantReason || (got == nil) != (tc.wantID == "") || (got != nil && got.AllocationID != tc.wantID) {
				t.Fatalf("StaticCandidate = %v, %+v; want %q, %q", got, refused, tc.wantID, tc.wantReason)
			}
			if got == nil && refused.Message == "" {
				t.Error("a refusal without a message")
			}
		})
	}
}
