package decide

import (
	"slices"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

func TestInstanceID(t *testing.T) {
	cases := map[string]string{
		"aws:///us-east-1a/i-0123456789abcdef0": "i-0123456789abcdef0",
		"aws:///i-0123abcd":                     "i-0123abcd",
		"aws:///us-east-1a/fargate-ip-10-0-0-1": "",
		"kwok://node-1":                         "",
		"":                                      "",
		"aws:///us-east-1a/i-XYZ":               "",
	}
	for in, want := range cases {
		got, err := InstanceID(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("InstanceID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestNodeInstance(t *testing.T) {
	const ours, other = "aws:///us-east-1a/i-0123456789abcdef0", "aws:///us-east-1a/i-0fedcba987654321f"
	cases := map[string]struct {
		recorded, providerID      string
		wantInstance, wantChanged string
		wantErr                   bool
	}{
		"first pass":                           {providerID: ours, wantInstance: "i-0123456789abcdef0"},
		"recorded, unchanged":                  {recorded: "i-0123456789abcdef0", providerID: ours, wantInstance: "i-0123456789abcdef0"},
		"recorded, the node registered again":  {recorded: "i-0123456789abcdef0", providerID: other, wantInstance: "i-0123456789abcdef0", wantChanged: "i-0fedcba987654321f"},
		"recorded, the node has no providerID": {recorded: "i-0123456789abcdef0", wantErr: true},
		"no providerID":                        {wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed, err := NodeInstance(tc.recorded, tc.providerID)
			if got != tc.wantInstance || changed != tc.wantChanged || (err != nil) != tc.wantErr {
				t.Fatalf("NodeInstance = %q, %q, %v; want %q, %q, error %v", got, changed, err, tc.wantInstance, tc.wantChanged, tc.wantErr)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"dev", "dev", true}, {"dev", "devs", false}, {"*", "", true}, {"d*", "dev", true}, {"*v", "dev", true},
		{"d?v", "dev", true}, {"d?v", "dv", false}, {"203.0.113.*", "203.0.113.7", true}, {"203.0.113.*", "203.0.114.7", false},
		{"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false}, {`a\*`, "a*", true}, {`a\*`, "ab", false}, {`a\?`, "a?", true},
		{"**", "anything", true}, {"", "", true}, {"", "x", false},
	}
	for _, c := range cases {
		if got := Glob(c.pattern, c.s); got != c.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

func filters(fs ...networkingv1alpha1.AddressFilter) []networkingv1alpha1.AddressFilter { return fs }

func f(name string, values ...string) networkingv1alpha1.AddressFilter {
	return networkingv1alpha1.AddressFilter{Name: name, Values: values}
}

func TestMatches(t *testing.T) {
	a := aws.Address{AllocationID: "eipalloc-01", PublicIP: "203.0.113.7", Tags: map[string]string{"env": "dev", "kubeip": "reserved"}}
	cases := map[string]struct {
		fs   []networkingv1alpha1.AddressFilter
		want bool
	}{
		"no filter":                 {nil, true},
		"tag value":                 {filters(f("tag:env", "prod", "dev")), true},
		"tag value mismatch":        {filters(f("tag:env", "prod")), false},
		"absent tag":                {filters(f("tag:team", "*")), false},
		"tag key wildcard":          {filters(f("tag-key", "kube*")), true},
		"public ip":                 {filters(f("public-ip", "203.0.113.*")), true},
		"allocation id":             {filters(f("allocation-id", "eipalloc-02")), false},
		"AND of filters":            {filters(f("tag:env", "dev"), f("tag:kubeip", "reserved")), true},
		"AND with one mismatch":     {filters(f("tag:env", "dev"), f("public-ip", "198.51.100.1")), false},
		"unknown name matches none": {filters(f("instance-id", "*")), false},
	}
	for name, tc := range cases {
		if got := Matches(a, tc.fs); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", name, got, tc.want)
		}
	}
}

func addr(id, ip string, tags map[string]string) aws.Address {
	return aws.Address{AllocationID: id, PublicIP: ip, Tags: tags}
}

func ids(addrs []aws.Address) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.AllocationID)
	}
	return out
}

func TestCandidatesOrder(t *testing.T) {
	pool := map[string]string{"kubeip": "reserved"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{"kubeip": "reserved"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	associated := addr("eipalloc-09", "203.0.113.1", pool)
	associated.AssociationID = "eipassoc-1"
	addrs := []aws.Address{
		addr("eipalloc-03", "203.0.113.10", with(map[string]string{"priority": "10"})),
		addr("eipalloc-01", "203.0.113.9", with(map[string]string{"priority": "2"})),
		addr("eipalloc-02", "203.0.113.9", pool),
		addr("eipalloc-04", "198.51.100.200", with(map[string]string{"priority": "2"})),
		associated,
		addr("eipalloc-05", "203.0.113.2", with(map[string]string{TagOwnerUID: "someone-else"})),
		addr("eipalloc-06", "203.0.113.3", with(map[string]string{TagOwnerUID: "me"})),
		addr("eipalloc-07", "203.0.113.4", map[string]string{"other": "pool"}),
	}
	o := Owner{UID: "me", Pool: &networkingv1alpha1.NodeElasticIPPool{Filters: filters(f("tag:kubeip", "reserved"))}}
	cases := map[string][]string{
		// Numerically, not as strings: .9 before .10.
		"":             {"eipalloc-04", "eipalloc-06", "eipalloc-01", "eipalloc-02", "eipalloc-03"},
		"PublicIp":     {"eipalloc-04", "eipalloc-06", "eipalloc-01", "eipalloc-02", "eipalloc-03"},
		"-PublicIp":    {"eipalloc-03", "eipalloc-01", "eipalloc-02", "eipalloc-06", "eipalloc-04"},
		"AllocationId": {"eipalloc-01", "eipalloc-02", "eipalloc-03", "eipalloc-04", "eipalloc-06"},
		// Integers as numbers (2 before 10); ties to the lower ID; without
		// the tag last, whichever the direction.
		"Tag:priority":  {"eipalloc-01", "eipalloc-04", "eipalloc-03", "eipalloc-02", "eipalloc-06"},
		"-Tag:priority": {"eipalloc-03", "eipalloc-01", "eipalloc-04", "eipalloc-02", "eipalloc-06"},
	}
	for orderBy, want := range cases {
		o.Pool.OrderBy = orderBy
		if got := ids(Candidates(addrs, o)); !slices.Equal(got, want) {
			t.Errorf("orderBy %q: %v, want %v", orderBy, got, want)
		}
	}
	if got := Candidates(addrs, Owner{}); got != nil {
		t.Errorf("candidates without a pool: %v", got)
	}
}

func TestParseOrder(t *testing.T) {
	cases := map[string]Order{
		"":               {Field: "PublicIp"},
		"PublicIp":       {Field: "PublicIp"},
		"-AllocationId":  {Field: "AllocationId", Descending: true},
		"Tag:a:b":        {Field: "Tag", TagKey: "a:b"},
		"-Tag:priority":  {Field: "Tag", TagKey: "priority", Descending: true},
		"PublicIpv4Pool": {Field: "PublicIpv4Pool"},
	}
	for in, want := range cases {
		if got := ParseOrder(in); got != want {
			t.Errorf("ParseOrder(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestAdoptable(t *testing.T) {
	pool := &networkingv1alpha1.NodeElasticIPPool{Filters: filters(f("tag:kubeip", "reserved"))}
	kubeip := addr("eipalloc-01", "203.0.113.1", map[string]string{"kubeip": "reserved"})
	ownedElsewhere := addr("eipalloc-02", "203.0.113.2", map[string]string{"kubeip": "reserved", TagOwnerUID: "other"})
	formerAuto := addr("eipalloc-03", "203.0.113.3", map[string]string{TagCluster: "c", TagOwnerKind: OwnerKind, TagOwnerUID: "gone", TagNode: "n1", TagMode: "Auto"})
	persons := addr("eipalloc-04", "203.0.113.4", nil)
	cases := map[string]struct {
		a    aws.Address
		o    Owner
		want bool
	}{
		"pool: kubeip's assignment":        {kubeip, Owner{Mode: networkingv1alpha1.NodeElasticIPModePool, Pool: pool}, true},
		"pool: another object's":           {ownedElsewhere, Owner{UID: "me", Mode: networkingv1alpha1.NodeElasticIPModePool, Pool: pool}, false},
		"pool: not in the pool":            {persons, Owner{Mode: networkingv1alpha1.NodeElasticIPModePool, Pool: pool}, false},
		"static: its address":              {persons, Owner{Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: "eipalloc-04"}, true},
		"static: another address":          {kubeip, Owner{Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: "eipalloc-04"}, false},
		"auto: a former one of this node":  {formerAuto, Owner{Cluster: "c", Node: "n1", Mode: networkingv1alpha1.NodeElasticIPModeAuto}, true},
		"auto: of another node":            {formerAuto, Owner{Cluster: "c", Node: "n2", Mode: networkingv1alpha1.NodeElasticIPModeAuto}, false},
		"auto: of another cluster":         {formerAuto, Owner{Cluster: "d", Node: "n1", Mode: networkingv1alpha1.NodeElasticIPModeAuto}, false},
		"auto: a person's is never taken":  {persons, Owner{Cluster: "c", Node: "n1", Mode: networkingv1alpha1.NodeElasticIPModeAuto}, false},
		"auto: kubeip's is never taken":    {kubeip, Owner{Cluster: "c", Node: "n1", Mode: networkingv1alpha1.NodeElasticIPModeAuto}, false},
		"static: owned by another object":  {ownedElsewhere, Owner{UID: "me", Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: "eipalloc-02"}, false},
		"static: owned by this one is too": {ownedElsewhere, Owner{UID: "other", Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: "eipalloc-02"}, true},
	}
	for name, tc := range cases {
		if got := Adoptable(tc.a, tc.o); got != tc.want {
			t.Errorf("%s: Adoptable = %v, want %v", name, got, tc.want)
		}
	}
}

var node1 = Node{Found: true, Instance: "i-01", ENI: "eni-01", PrimaryIP: "10.0.0.10"}

func on(a aws.Address, eni, ip string) aws.Address {
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress = "eipassoc-"+a.AllocationID, eni, ip
	return a
}

func TestSelect(t *testing.T) {
	o := Owner{Cluster: "c", UID: "me", Node: "n1", Mode: networkingv1alpha1.NodeElasticIPModeAuto}
	mine := addr("eipalloc-02", "203.0.113.2", map[string]string{TagOwnerUID: "me"})
	dup := addr("eipalloc-03", "203.0.113.3", map[string]string{TagOwnerUID: "me"})
	foreign := on(addr("eipalloc-09", "203.0.113.9", nil), "eni-01", "10.0.0.10")
	elsewhere := on(addr("eipalloc-08", "203.0.113.8", nil), "eni-02", "10.0.0.11")

	best, how, dups, onNode := Select([]aws.Address{dup, mine, foreign, elsewhere, mine}, o, node1)
	if best == nil || best.AllocationID != "eipalloc-02" || how != MatchOwnerUID || !slices.Equal(ids(dups), []string{"eipalloc-03"}) ||
		onNode == nil || onNode.AllocationID != "eipalloc-09" {
		t.Fatalf("Select = %v %s %v %v", best, how, ids(dups), onNode)
	}
	// The recorded one wins over an owned one; an associated owned one over
	// an unassociated one.
	o.ExternalName = "eipalloc-03"
	if best, how, _, _ := Select([]aws.Address{mine, dup}, o, node1); best.AllocationID != "eipalloc-03" || how != MatchExternalName {
		t.Errorf("recorded: %v %s", best, how)
	}
	o.ExternalName = ""
	mineOn := on(dup, "eni-01", "10.0.0.10")
	if best, _, dups, _ := Select([]aws.Address{mine, mineOn}, o, node1); best.AllocationID != "eipalloc-03" || !slices.Equal(ids(dups), []string{"eipalloc-02"}) {
		t.Errorf("associated first: %v, dups %v", best, ids(dups))
	}
	// Adopting from the node.
	pool := o
	pool.Mode, pool.Pool = networkingv1alpha1.NodeElasticIPModePool, &networkingv1alpha1.NodeElasticIPPool{Filters: filters(f("allocation-id", "eipalloc-09"))}
	if best, how, _, onNode := Select([]aws.Address{foreign}, pool, node1); best == nil || how != MatchAdopted || onNode != nil {
		t.Errorf("adoption: %v %s onNode %v", best, how, onNode)
	}
	if best, how, _, _ := Select(nil, o, node1); best != nil || how != MatchNone {
		t.Errorf("nothing: %v %s", best, how)
	}
}

func TestDecide(t *testing.T) {
	o := Owner{Cluster: "c", UID: "me", Node: "n1", Instance: "i-01", Mode: networkingv1alpha1.NodeElasticIPModeAuto}
	tagged := func(a aws.Address) aws.Address {
		a.Tags = Tags(o)
		return a
	}
	free := tagged(addr("eipalloc-02", "203.0.113.2", nil))
	bound := on(free, "eni-01", "10.0.0.10")
	elsewhere := on(free, "eni-77", "10.0.7.7")
	foreign := on(addr("eipalloc-09", "203.0.113.9", nil), "eni-01", "10.0.0.10")
	untagged := addr("eipalloc-02", "203.0.113.2", map[string]string{"kubeip": "reserved"})
	orphanTagged := bound
	orphanTagged.Tags = Tags(Owner{Cluster: "c", UID: "me", Node: "n1", Instance: "i-01", Mode: networkingv1alpha1.NodeElasticIPModeAuto, Orphan: true})
	type want struct {
		exists, upToDate, associate, bound, lateInit bool
		reason                                       xpv2.ConditionReason
		tags                                         int
		remove                                       []string
	}
	cases := map[string]struct {
		in   PlanInput
		want want
	}{
		"node gone: keep what there is": {PlanInput{Owner: o, Node: Node{}, Addr: &free},
			want{exists: true, upToDate: true, reason: networkingv1alpha1.NodeElasticIPReasonNodeNotFound, lateInit: true}},
		"no instance": {PlanInput{Owner: o, Node: Node{Found: true, InstanceErr: "no providerID"}},
			want{exists: true, upToDate: true, reason: networkingv1alpha1.NodeElasticIPReasonInstanceIDUnknown}},
		"the node names another instance now": {PlanInput{Owner: o, Node: Node{Found: true, Instance: "i-01", ChangedTo: "i-02", ENI: "eni-01", PrimaryIP: "10.0.0.10"}, Addr: &bound},
			want{exists: true, upToDate: true, lateInit: true, reason: networkingv1alpha1.NodeElasticIPReasonInstanceIDChanged}},
		"no primary interface": {PlanInput{Owner: o, Node: Node{Found: true, Instance: "i-01"}},
			want{exists: true, upToDate: true, reason: networkingv1alpha1.NodeElasticIPReasonNetworkInterfaceNotFound}},
		"nothing yet: create": {PlanInput{Owner: o, Node: node1},
			want{reason: networkingv1alpha1.NodeElasticIPReasonAssociating}},
		"node taken by someone's address": {PlanInput{Owner: o, Node: node1, OnNode: &foreign},
			want{exists: true, upToDate: true, reason: networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP}},
		"allocated: associate": {PlanInput{Owner: o, Node: node1, Addr: &free, Match: MatchOwnerUID},
			want{exists: true, associate: true, lateInit: true, reason: networkingv1alpha1.NodeElasticIPReasonAssociating}},
		"allocated but the node is taken meanwhile": {PlanInput{Owner: o, Node: node1, Addr: &free, OnNode: &foreign},
			want{exists: true, upToDate: true, lateInit: true, reason: networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP}},
		"on the node: ready": {PlanInput{Owner: func() Owner { x := o; x.ExternalName = "eipalloc-02"; return x }(), Node: node1, Addr: &bound},
			want{exists: true, upToDate: true, bound: true, reason: xpv2.ReasonAvailable}},
		"moved elsewhere: in use": {PlanInput{Owner: o, Node: node1, Addr: &elsewhere},
			want{exists: true, upToDate: true, lateInit: true, reason: networkingv1alpha1.NodeElasticIPReasonAddressInUse}},
		"adopted: tag it": {PlanInput{Owner: o, Node: node1, Addr: func() *aws.Address { a := on(untagged, "eni-01", "10.0.0.10"); return &a }(), Match: MatchAdopted},
			want{exists: true, bound: true, lateInit: true, reason: xpv2.ReasonAvailable, tags: 6}},
		"deletion policy tag dropped": {PlanInput{Owner: o, Node: node1, Addr: &orphanTagged},
			want{exists: true, bound: true, lateInit: true, reason: xpv2.ReasonAvailable, remove: []string{TagDeletionPolicy}}},
		"duplicates to give up": {PlanInput{Owner: o, Node: node1, Addr: &bound, Duplicates: []aws.Address{free}},
			want{exists: true, bound: true, lateInit: true, reason: xpv2.ReasonAvailable}},
		"deleting, owned": {PlanInput{Owner: o, Deleting: true, Addr: &bound},
			want{exists: true, upToDate: true, reason: xpv2.ReasonDeleting}},
		"deleting, given back": {PlanInput{Owner: o, Deleting: true, Addr: &untagged},
			want{upToDate: true, reason: xpv2.ReasonDeleting}},
		"deleting, gone": {PlanInput{Owner: o, Deleting: true},
			want{upToDate: true, reason: xpv2.ReasonDeleting}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Decide(tc.in)
			got := want{exists: p.Exists, upToDate: p.UpToDate, associate: p.Associate, bound: p.Bound, lateInit: p.LateInit,
				reason: p.Ready.Reason, tags: len(p.Tags), remove: p.RemoveTags}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s\nready message: %s", diff, p.Ready.Message)
			}
			if p.Ready.Status == corev1.ConditionFalse && p.Ready.Message == "" {
				t.Errorf("Ready=False without a message")
			}
		})
	}
}

func TestPlanDelete(t *testing.T) {
	auto := on(addr("eipalloc-01", "203.0.113.1", map[string]string{TagCluster: "c", TagOwnerUID: "me", TagMode: "Auto", "team": "x"}), "eni-01", "10.0.0.10")
	pool := addr("eipalloc-02", "203.0.113.2", map[string]string{TagCluster: "c", TagOwnerUID: "me", TagNode: "n", TagMode: "Pool", "kubeip": "reserved"})
	adoptedKubeip := on(addr("eipalloc-03", "203.0.113.3", map[string]string{"kubeip": "reserved", TagOwnerUID: "me"}), "eni-01", "10.0.0.10")
	cases := map[string]struct {
		policy networkingv1alpha1.NodeElasticIPReleasePolicy
		mode   networkingv1alpha1.NodeElasticIPAllocationMode
		a      aws.Address
		want   DeletePlan
	}{
		"auto, delete": {networkingv1alpha1.NodeElasticIPReleaseDelete, networkingv1alpha1.NodeElasticIPModeAuto, auto,
			DeletePlan{Disassociate: true, Release: true}},
		"auto, retain": {networkingv1alpha1.NodeElasticIPReleaseRetain, networkingv1alpha1.NodeElasticIPModeAuto, auto,
			DeletePlan{Disassociate: true, UntagKeys: []string{TagCluster, TagOwnerUID, TagMode}}},
		"pool, retain, unassociated": {networkingv1alpha1.NodeElasticIPReleaseRetain, networkingv1alpha1.NodeElasticIPModePool, pool,
			DeletePlan{UntagKeys: []string{TagCluster, TagOwnerUID, TagNode, TagMode}}},
		// An address edgeplane did not allocate is never released.
		"auto policy on a kubeip address": {networkingv1alpha1.NodeElasticIPReleaseDelete, networkingv1alpha1.NodeElasticIPModeAuto, adoptedKubeip,
			DeletePlan{Disassociate: true, UntagKeys: []string{TagOwnerUID}}},
		"delete on a pool address": {networkingv1alpha1.NodeElasticIPReleaseDelete, networkingv1alpha1.NodeElasticIPModePool, pool,
			DeletePlan{UntagKeys: []string{TagCluster, TagOwnerUID, TagNode, TagMode}}},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, PlanDelete(tc.policy, tc.mode, tc.a)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestTags(t *testing.T) {
	got := Tags(Owner{Cluster: "c", UID: "u", Node: "n", Instance: "i-1", Mode: networkingv1alpha1.NodeElasticIPModePool, Orphan: true,
		User: map[string]string{"team": "edge", TagCluster: "spoof", "aws:x": "y"}})
	want := map[string]string{"team": "edge", TagCluster: "c", TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagNode: "n", TagInstanceID: "i-1",
		TagMode: "Pool", TagDeletionPolicy: DeletionPolicyOrphan}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := StaleTags(aws.Address{Tags: got}, Owner{}); !slices.Equal(s, []string{TagDeletionPolicy}) {
		t.Errorf("StaleTags = %v", s)
	}
}

func TestNodeWants(t *testing.T) {
	m := Marks{TaintKey: "example.com/wait", KubeIPLabel: true}
	taint := Taint(m.TaintKey)
	bound := BoundWant(m, "eipalloc-01", "203.0.113.7")
	want := nodepatch.Want{Taint: taint,
		Labels:      map[string]*string{networkingv1alpha1.LabelNodeElasticIP: ptr.To("203.0.113.7"), networkingv1alpha1.LegacyLabelKubeIPAssigned: ptr.To("203_0_113_7")},
		Annotations: map[string]*string{networkingv1alpha1.AnnotationNodeElasticIPAllocationID: ptr.To("eipalloc-01")}}
	if diff := cmp.Diff(want, bound); diff != "" {
		t.Errorf("BoundWant (-want +got):\n%s", diff)
	}
	pending := PendingWant(m)
	if !pending.Tainted || pending.Labels[networkingv1alpha1.LabelNodeElasticIP] != nil || len(pending.Labels) != 2 {
		t.Errorf("PendingWant = %+v", pending)
	}
	if w := PendingWant(Marks{}); w.Taint.Key != "" {
		t.Errorf("no taint key, yet a taint: %+v", w.Taint)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{networkingv1alpha1.LabelNodeElasticIP: "198.51.100.1"},
		Annotations: map[string]string{networkingv1alpha1.AnnotationNodeElasticIPAllocationID: "eipalloc-01"}}}
	clean := CleanWant(node, m, "eipalloc-01", "203.0.113.7")
	if _, ok := clean.Labels[networkingv1alpha1.LabelNodeElasticIP]; ok {
		t.Error("CleanWant removes a label naming another address")
	}
	if v, ok := clean.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID]; !ok || v != nil {
		t.Error("CleanWant keeps the annotation naming its address")
	}
	if clean.Tainted || clean.Taint.Key != m.TaintKey {
		t.Errorf("CleanWant taint %+v tainted %v: want it removed", clean.Taint, clean.Tainted)
	}
}

func TestNeedsTaintAtAdmission(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"want": "true"})
	key := "example.com/wait"
	labelled := func(extra ...func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"want": "true"}}}
		for _, e := range extra {
			e(n)
		}
		return n
	}
	plain := &corev1.Node{}
	cases := map[string]struct {
		old, node *corev1.Node
		key       string
		want      bool
	}{
		"created labelled":         {nil, labelled(), key, true},
		"labelled later":           {plain, labelled(), key, true},
		"matched already":          {labelled(), labelled(), key, false},
		"not selected":             {nil, plain, key, false},
		"no taint key":             {nil, labelled(), "", false},
		"already has its address":  {nil, labelled(func(n *corev1.Node) { n.Labels[networkingv1alpha1.LabelNodeElasticIP] = "203.0.113.7" }), key, false},
		"already tainted":          {nil, labelled(func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{Taint(key)} }), key, false},
		"another taint is no help": {nil, labelled(func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}} }), key, true},
	}
	for name, tc := range cases {
		if got := NeedsTaintAtAdmission(tc.old, tc.node, sel, tc.key); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

func TestSweep(t *testing.T) {
	tags := func(extra map[string]string) map[string]string {
		m := map[string]string{TagCluster: "c", TagOwnerKind: OwnerKind, TagOwnerUID: "gone", TagNode: "n", TagMode: "Auto"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	obj, release := SweepObject(addr("eipalloc-01", "203.0.113.1", tags(nil)), "c")
	if !obj.HasClusterIdentity || obj.OwnerUID != "gone" || obj.ReportOnly != "" || !release {
		t.Errorf("auto orphan: %+v release %v", obj, release)
	}
	obj, release = SweepObject(addr("eipalloc-02", "203.0.113.2", tags(map[string]string{TagMode: "Pool"})), "c")
	if release || obj.ReportOnly != "" {
		t.Errorf("pool orphan: %+v release %v; want given back", obj, release)
	}
	if obj, _ := SweepObject(addr("eipalloc-03", "203.0.113.3", tags(map[string]string{TagDeletionPolicy: DeletionPolicyOrphan})), "c"); obj.ReportOnly == "" {
		t.Error("an address kept on purpose is deletable")
	}
	if obj, _ := SweepObject(addr("eipalloc-04", "203.0.113.4", tags(map[string]string{TagOwnerKind: "PodElasticIP"})), "c"); obj.HasClusterIdentity {
		t.Error("another kind's address counts as this kind's")
	}
	if obj, _ := SweepObject(addr("eipalloc-05", "203.0.113.5", tags(nil)), "other"); obj.HasClusterIdentity {
		t.Error("another cluster's address counts as this cluster's")
	}
	listed := []aws.Address{addr("eipalloc-01", "", tags(map[string]string{TagOwnerUID: "former"})), addr("eipalloc-02", "", tags(nil))}
	owners := SweepOwners(listed, sets.New[types.UID]("live"), sets.New("eipalloc-01"))
	if !owners.Equal(sets.New[types.UID]("live", "former")) {
		t.Errorf("owners %v: want the live UID and the recorded address's tag UID", sets.List(owners))
	}
}
