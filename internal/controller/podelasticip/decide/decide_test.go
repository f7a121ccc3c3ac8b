package decide

import (
	"maps"
	"slices"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

const (
	auto   = networkingv1alpha1.PodElasticIPModeAuto
	pool   = networkingv1alpha1.PodElasticIPModePool
	static = networkingv1alpha1.PodElasticIPModeStatic
)

func owner(mode networkingv1alpha1.PodElasticIPAllocationMode) Owner {
	o := Owner{Cluster: "c1", UID: "uid-1", Namespace: "ns", Pod: "web-0", Mode: mode, LegacyCluster: "legacy"}
	if mode != auto {
		o.TagKey = "pool-key"
	}
	return o
}

func addr(id string, tags map[string]string) Address {
	return Address{AllocationID: id, PublicIP: "198.18.0.1", Tags: tags}
}

func withoutTag(a Address, key string) Address {
	a.Tags = maps.Clone(a.Tags)
	delete(a.Tags, key)
	return a
}

// recorded is o with the external name id.
func recorded(o Owner, id string) Owner {
	o.ExternalName = id
	return o
}

// onPod is o whose pod has IP podIP on ENI eni.
func onPod(o Owner, podIP, eni string) Owner {
	o.PodIP, o.PodENI = podIP, eni
	return o
}

func associated(a Address, ip string) Address {
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress = "eipassoc-"+a.AllocationID, "eni-1", ip
	return a
}

func TestClassify(t *testing.T) {
	ours := Tags(owner(auto))
	cases := map[string]struct {
		a    Address
		o    Owner
		want Match
	}{
		"external name of an address with our UID": {a: addr("eipalloc-1", map[string]string{TagOwnerUID: "uid-1"}), o: recorded(owner(auto), "eipalloc-1"), want: MatchExternalName},
		"forged external name: another tenant's address": {a: associated(addr("eipalloc-1", map[string]string{TagCluster: "c1", TagNamespace: "other", TagOwnerUID: "uid-b"}), "10.0.0.9"),
			o: recorded(owner(auto), "eipalloc-1"), want: MatchNone},
		"forged external name: an untagged address": {a: addr("eipalloc-1", nil), o: recorded(owner(auto), "eipalloc-1"), want: MatchNone},
		"external name, tags withdrawn by a losing claimer, association ours": {a: associated(addr("eipalloc-1", map[string]string{"pool-key": ""}), "10.0.0.5"),
			o: onPod(recorded(owner(pool), "eipalloc-1"), "10.0.0.5", "eni-1"), want: MatchExternalName},
		"external name, tags withdrawn, being bound to the pod (Tencent)": {a: pending(addr("eipalloc-1", map[string]string{"pool-key": ""}), PendingBinding, "10.0.0.5"),
			o: onPod(recorded(owner(pool), "eipalloc-1"), "10.0.0.5", "eni-1"), want: MatchExternalName},
		"external name, on the pod's IP, ENI not looked up": {a: associated(addr("eipalloc-1", map[string]string{"pool-key": ""}), "10.0.0.5"),
			o: onPod(recorded(owner(pool), "eipalloc-1"), "10.0.0.5", ""), want: MatchNone},
		"external name, the pod has another IP now": {a: associated(addr("eipalloc-1", map[string]string{"pool-key": ""}), "10.0.0.5"),
			o: onPod(recorded(owner(pool), "eipalloc-1"), "10.0.0.6", "eni-1"), want: MatchNone},
		"external name, the pod's IP on another ENI (another VPC)": {a: associated(addr("eipalloc-1", map[string]string{"pool-key": ""}), "10.0.0.5"),
			o: onPod(recorded(owner(pool), "eipalloc-1"), "10.0.0.5", "eni-2"), want: MatchNone},
		"forged external name, the victim elsewhere": {a: associated(addr("eipalloc-1", map[string]string{TagNamespace: "other", TagOwnerUID: "uid-b"}), "10.0.0.9"),
			o: onPod(recorded(owner(auto), "eipalloc-1"), "10.0.0.5", "eni-1"), want: MatchNone},
		"external name of a legacy address being adopted": {a: addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}),
			o: recorded(owner(auto), "eipalloc-1"), want: MatchLegacy},
		"owner UID":     {a: addr("eipalloc-1", ours), o: owner(auto), want: MatchOwnerUID},
		"other cluster": {a: addr("eipalloc-1", map[string]string{TagCluster: "c2", TagOwnerUID: "uid-1"}), o: owner(auto), want: MatchNone},
		"other owner":   {a: addr("eipalloc-1", map[string]string{TagCluster: "c1", TagOwnerUID: "uid-2"}), o: owner(auto), want: MatchNone},
		"kept for the pod": {a: addr("eipalloc-1", map[string]string{TagCluster: "c1", TagOwnerUID: "uid-old", TagPod: "ns/web-0",
			TagMode: "Auto", TagReleaseAfter: "2030-01-01T00:00:00Z"}), o: owner(auto), want: MatchKept},
		"kept for another mode": {a: addr("eipalloc-1", map[string]string{TagCluster: "c1", TagPod: "ns/web-0",
			TagMode: "Pool", TagReleaseAfter: "2030-01-01T00:00:00Z"}), o: owner(auto), want: MatchNone},
		"kept pool address without the pool key": {a: addr("eipalloc-1", map[string]string{TagCluster: "c1", TagPod: "ns/web-0",
			TagMode: "Pool", TagReleaseAfter: "2030-01-01T00:00:00Z"}), o: owner(pool), want: MatchNone},
		"legacy auto": {a: addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}),
			o: owner(auto), want: MatchLegacy},
		"legacy of another cluster": {a: addr("eipalloc-1", map[string]string{LegacyTagCluster: "other", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}),
			o: owner(auto), want: MatchNone},
		"legacy fixed-tag for a pool": {a: addr("eipalloc-1", map[string]string{"pool-key": "", LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "fixed-tag"}),
			o: owner(pool), want: MatchLegacy},
		"legacy with other type": {a: addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "fixed-tag"}),
			o: owner(auto), want: MatchNone},
		"legacy tags on another namespace's address": {a: addr("eipalloc-1", map[string]string{TagNamespace: "other", TagOwnerUID: "uid-b",
			LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}), o: owner(auto), want: MatchNone},
		"legacy adoption off": {a: addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}),
			o: func() Owner { o := owner(auto); o.LegacyCluster = ""; return o }(), want: MatchNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Classify(tc.a, tc.o); got != tc.want {
				t.Fatalf("Classify = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	o := owner(auto)
	ours := Tags(o)
	a1, a2 := addr("eipalloc-1", ours), associated(addr("eipalloc-2", ours), "10.0.0.5")
	legacy := addr("eipalloc-0", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"})
	best, how, dups := Select([]Address{legacy, a1, a2, addr("eipalloc-9", nil)}, o)
	if best == nil || best.AllocationID != "eipalloc-2" || how != MatchOwnerUID {
		t.Fatalf("Select = %v %q, want the associated owned address eipalloc-2", best, how)
	}
	if len(dups) != 1 || dups[0].AllocationID != "eipalloc-1" {
		t.Fatalf("duplicates = %v, want eipalloc-1", dups)
	}
	if best, _, _ := Select([]Address{addr("eipalloc-9", nil)}, o); best != nil {
		t.Fatalf("Select found %v among foreign addresses", best)
	}
}

func TestPodTarget(t *testing.T) {
	cases := map[string]struct {
		pod        Pod
		wantIP     string
		wantReason xpv2.ConditionReason
	}{
		"missing":            {pod: Pod{}, wantReason: networkingv1alpha1.PodElasticIPReasonPodNotFound},
		"terminating":        {pod: Pod{Found: true, Terminating: true, IP: "10.0.0.5", Phase: corev1.PodRunning}, wantReason: networkingv1alpha1.PodElasticIPReasonPodNotRunning},
		"finished":           {pod: Pod{Found: true, IP: "10.0.0.5", Phase: corev1.PodSucceeded}, wantReason: networkingv1alpha1.PodElasticIPReasonPodNotRunning},
		"pending":            {pod: Pod{Found: true, Phase: corev1.PodPending}, wantReason: networkingv1alpha1.PodElasticIPReasonPodNotRunning},
		"running without IP": {pod: Pod{Found: true, Phase: corev1.PodRunning}, wantReason: networkingv1alpha1.PodElasticIPReasonPodHasNoIP},
		"host network":       {pod: Pod{Found: true, Phase: corev1.PodRunning, HostNetwork: true, IP: "10.0.0.5"}, wantReason: networkingv1alpha1.PodElasticIPReasonPodHasNoIP},
		"pending with IP":    {pod: Pod{Found: true, Phase: corev1.PodPending, IP: "10.0.0.5"}, wantIP: "10.0.0.5"},
		"running":            {pod: Pod{Found: true, Phase: corev1.PodRunning, IP: "10.0.0.5"}, wantIP: "10.0.0.5"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ip, reason, _ := tc.pod.Target()
			if ip != tc.wantIP || reason != tc.wantReason {
				t.Fatalf("Target = %q, %q; want %q, %q", ip, reason, tc.wantIP, tc.wantReason)
			}
		})
	}
}

func TestPodFrom(t *testing.T) {
	p := &corev1.Pod{Status: corev1.PodStatus{PodIP: "fd00::1", PodIPs: []corev1.PodIP{{IP: "fd00::1"}, {IP: "10.0.0.7"}}, Phase: corev1.PodRunning}}
	if got := PodFrom(p); got.IP != "10.0.0.7" || !got.Found {
		t.Fatalf("PodFrom = %+v, want the IPv4 address", got)
	}
	if PodFrom(nil).Found {
		t.Fatal("PodFrom(nil) found")
	}
}

func TestDecide(t *testing.T) {
	o := owner(auto)
	o.ExternalName = "eipalloc-1"
	running := Pod{Found: true, Phase: corev1.PodRunning, IP: "10.0.0.5", UID: "p1"}
	ours := addr("eipalloc-1", Tags(o))
	ptr := func(a Address) *Address { return &a }
	cases := map[string]struct {
		in   PlanInput
		want Plan
	}{
		"nothing yet, pod running: create": {
			in:   PlanInput{Owner: o, Pod: running},
			want: Plan{Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"nothing yet, pod pending: wait": {
			in:   PlanInput{Owner: o, Pod: Pod{Found: true, Phase: corev1.PodPending}},
			want: Plan{Exists: true, UpToDate: true, Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonPodNotRunning, "")},
		},
		"allocated, not associated": {
			in:   PlanInput{Owner: o, Pod: running, Addr: ptr(ours), Match: MatchExternalName},
			want: Plan{Exists: true, Addr: ptr(ours), AssociateIP: "10.0.0.5", Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"associated with the pod": {
			in:   PlanInput{Owner: o, Pod: running, Addr: ptr(associated(ours, "10.0.0.5")), Match: MatchExternalName},
			want: Plan{Exists: true, UpToDate: true, Addr: ptr(associated(ours, "10.0.0.5")), Ready: xpv2.Available()},
		},
		"associated, allocated before addresses carried their namespace: tag it": {
			in: PlanInput{Owner: o, Pod: running, Addr: ptr(associated(withoutTag(ours, TagNamespace), "10.0.0.5")), Match: MatchExternalName},
			want: Plan{Exists: true, Addr: ptr(associated(withoutTag(ours, TagNamespace), "10.0.0.5")), Tags: map[string]string{TagNamespace: "ns"},
				Ready: xpv2.Available()},
		},
		"pod recreated with a new IP: follow it": {
			in: PlanInput{Owner: o, Pod: running, Addr: ptr(associated(ours, "10.0.0.4")), Match: MatchExternalName},
			want: Plan{Exists: true, Addr: ptr(associated(ours, "10.0.0.4")), Disassociate: true, AssociateIP: "10.0.0.5",
				Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"pod gone: disassociate": {
			in: PlanInput{Owner: o, Pod: Pod{}, Addr: ptr(associated(ours, "10.0.0.4")), Match: MatchExternalName},
			want: Plan{Exists: true, Addr: ptr(associated(ours, "10.0.0.4")), Disassociate: true,
				Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonPodNotFound, "")},
		},
		"found by UID after a crash: record the external name": {
			in:   PlanInput{Owner: func() Owner { o := o; o.ExternalName = ""; return o }(), Pod: running, Addr: ptr(associated(ours, "10.0.0.5")), Match: MatchOwnerUID},
			want: Plan{Exists: true, UpToDate: true, LateInit: true, Addr: ptr(associated(ours, "10.0.0.5")), Ready: xpv2.Available()},
		},
		"legacy address: adopt with our tags": {
			in: PlanInput{Owner: func() Owner { o := o; o.ExternalName = ""; return o }(), Pod: running,
				Addr: ptr(associated(addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}), "10.0.0.5")), Match: MatchLegacy},
			want: Plan{Exists: true, LateInit: true, Tags: Tags(o), Ready: xpv2.Available(),
				Addr: ptr(associated(addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}), "10.0.0.5"))},
		},
		"kept address: adopt and drop release-after": {
			in: PlanInput{Owner: o, Pod: running, Match: MatchKept,
				Addr: ptr(addr("eipalloc-1", map[string]string{TagCluster: "c1", TagOwnerKind: OwnerKind, TagOwnerUID: "old", TagPod: "ns/web-0", TagMode: "Auto", TagReleaseAfter: "2030-01-01T00:00:00Z"}))},
			// Kept before addresses carried their namespace: adopting adds it.
			want: Plan{Exists: true, Tags: map[string]string{TagOwnerUID: "uid-1", TagNamespace: "ns"}, RemoveTags: []string{TagReleaseAfter}, AssociateIP: "10.0.0.5",
				Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, ""),
				Addr:  ptr(addr("eipalloc-1", map[string]string{TagCluster: "c1", TagOwnerKind: OwnerKind, TagOwnerUID: "old", TagPod: "ns/web-0", TagMode: "Auto", TagReleaseAfter: "2030-01-01T00:00:00Z"}))},
		},
		"duplicates are released": {
			in:   PlanInput{Owner: o, Pod: running, Addr: ptr(associated(ours, "10.0.0.5")), Match: MatchExternalName, Duplicates: []Address{addr("eipalloc-2", Tags(o))}},
			want: Plan{Exists: true, Addr: ptr(associated(ours, "10.0.0.5")), ReleaseDuplicates: []Address{addr("eipalloc-2", Tags(o))}, Ready: xpv2.Available()},
		},
		"management policies without Delete: tag the address Orphan": {
			in: PlanInput{Owner: orphaned(o), Pod: running, Addr: ptr(associated(ours, "10.0.0.5")), Match: MatchExternalName},
			want: Plan{Exists: true, Addr: ptr(associated(ours, "10.0.0.5")), Tags: map[string]string{TagDeletionPolicy: DeletionPolicyOrphan},
				Ready: xpv2.Available()},
		},
		"management policies without Delete, tagged Orphan: up to date": {
			in:   PlanInput{Owner: orphaned(o), Pod: running, Addr: ptr(associated(addr("eipalloc-1", Tags(orphaned(o))), "10.0.0.5")), Match: MatchExternalName},
			want: Plan{Exists: true, UpToDate: true, Addr: ptr(associated(addr("eipalloc-1", Tags(orphaned(o))), "10.0.0.5")), Ready: xpv2.Available()},
		},
		"Delete added back to the management policies: drop the Orphan tag": {
			in: PlanInput{Owner: o, Pod: running, Addr: ptr(associated(addr("eipalloc-1", Tags(orphaned(o))), "10.0.0.5")), Match: MatchExternalName},
			want: Plan{Exists: true, Addr: ptr(associated(addr("eipalloc-1", Tags(orphaned(o))), "10.0.0.5")), RemoveTags: []string{TagDeletionPolicy},
				Ready: xpv2.Available()},
		},
		"legacy address adopted without Delete: tag it Orphan too": {
			in: PlanInput{Owner: func() Owner { o := orphaned(o); o.ExternalName = ""; return o }(), Pod: running,
				Addr: ptr(associated(addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}), "10.0.0.5")), Match: MatchLegacy},
			want: Plan{Exists: true, LateInit: true, Tags: Tags(orphaned(o)), Ready: xpv2.Available(),
				Addr: ptr(associated(addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}), "10.0.0.5"))},
		},
		"invalid spec": {
			in:   PlanInput{Owner: o, Pod: running, Invalid: "bad annotation"},
			want: Plan{Exists: true, UpToDate: true, Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonInvalidSpec, "")},
		},
		"deleting, owned": {
			in:   PlanInput{Owner: o, Deleting: true, Addr: ptr(ours), Match: MatchExternalName},
			want: Plan{Exists: true, UpToDate: true, Addr: ptr(ours), Ready: xpv2.Deleting()},
		},
		"deleting, already kept": {
			in: PlanInput{Owner: o, Deleting: true, Match: MatchExternalName,
				Addr: ptr(addr("eipalloc-1", map[string]string{TagOwnerUID: "uid-1", TagReleaseAfter: "2030-01-01T00:00:00Z"}))},
			want: Plan{UpToDate: true, Ready: xpv2.Deleting(),
				Addr: ptr(addr("eipalloc-1", map[string]string{TagOwnerUID: "uid-1", TagReleaseAfter: "2030-01-01T00:00:00Z"}))},
		},
		"deleting, untagged (retained)": {
			in:   PlanInput{Owner: o, Deleting: true, Addr: ptr(addr("eipalloc-1", nil)), Match: MatchExternalName},
			want: Plan{UpToDate: true, Addr: ptr(addr("eipalloc-1", nil)), Ready: xpv2.Deleting()},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Decide(tc.in)
			// xpv2.Condition's Equal method ignores cmp options: compare
			// the message-free condition.
			got.Ready.Message = ""
			got.Ready.LastTransitionTime = metav1.Time{}
			tc.want.Ready.LastTransitionTime = metav1.Time{}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func orphaned(o Owner) Owner {
	o.Orphan = true
	return o
}

func TestTagsDeletionPolicy(t *testing.T) {
	for _, mode := range []networkingv1alpha1.PodElasticIPAllocationMode{auto, pool, static} {
		if v, ok := Tags(owner(mode))[TagDeletionPolicy]; ok {
			t.Errorf("%s: deleting owner tagged %s=%q", mode, TagDeletionPolicy, v)
		}
		if v := Tags(orphaned(owner(mode)))[TagDeletionPolicy]; v != DeletionPolicyOrphan {
			t.Errorf("%s: orphaning owner tagged %s=%q, want %q", mode, TagDeletionPolicy, v, DeletionPolicyOrphan)
		}
	}
	if !IsReservedTagKey(TagDeletionPolicy) {
		t.Error("users may set the deletion policy tag")
	}
	orphanedAddr := addr("eipalloc-1", Tags(orphaned(owner(pool))))
	if got := PlanDelete(networkingv1alpha1.PodElasticIPReleaseRetain, pool, orphanedAddr, time.Now(), 0); !slices.Contains(got.UntagKeys, TagDeletionPolicy) {
		t.Errorf("giving a Pool address back keeps %s: untags %v", TagDeletionPolicy, got.UntagKeys)
	}
}

func TestDecideLostPoolAddress(t *testing.T) {
	o := owner(pool)
	o.ExternalName = "eipalloc-1"
	running := Pod{Found: true, Phase: corev1.PodRunning, IP: "10.0.0.5"}
	theirs := addr("eipalloc-1", map[string]string{"pool-key": "", TagClaim: "c2/ns/web-0"})
	if got := Decide(PlanInput{Owner: o, Pod: running, Addr: &theirs, Match: MatchExternalName}); got.Exists {
		t.Fatalf("an address claimed by another cluster is still ours: %+v", got)
	}
	// We hold the association: re-assert our claim.
	held := associated(theirs, "10.0.0.5")
	got := Decide(PlanInput{Owner: o, Pod: running, Addr: &held, Match: MatchExternalName, KnownAssociationID: held.AssociationID})
	if !got.Exists || got.Tags[TagClaim] != o.ClaimValue() {
		t.Fatalf("the association holder does not re-assert its claim: %+v", got)
	}
}

func TestPlanDelete(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := owner(pool)
	tagged := associated(addr("eipalloc-1", Tags(o)), "10.0.0.5")
	cases := map[string]struct {
		policy networkingv1alpha1.PodElasticIPReleasePolicy
		mode   networkingv1alpha1.PodElasticIPAllocationMode
		a      Address
		want   DeletePlan
	}{
		"delete auto": {policy: networkingv1alpha1.PodElasticIPReleaseDelete, mode: auto, a: tagged, want: DeletePlan{Disassociate: true, Release: true}},
		"delete never releases a pool address": {policy: networkingv1alpha1.PodElasticIPReleaseDelete, mode: pool, a: tagged,
			want: DeletePlan{Disassociate: true, UntagKeys: []string{TagCluster, TagOwnerKind, TagOwnerUID, TagNamespace, TagPod, TagMode, TagClaim}}},
		"retain pool": {policy: networkingv1alpha1.PodElasticIPReleaseRetain, mode: pool, a: tagged,
			want: DeletePlan{Disassociate: true, UntagKeys: []string{TagCluster, TagOwnerKind, TagOwnerUID, TagNamespace, TagPod, TagMode, TagClaim}}},
		"retain adopted legacy": {policy: networkingv1alpha1.PodElasticIPReleaseRetain, mode: static,
			a:    addr("eipalloc-1", map[string]string{LegacyTagType: "fixed-tag-value", LegacyTagPod: "ns/web-0", LegacyTagCluster: "legacy", "k": "ns/web-0"}),
			want: DeletePlan{UntagKeys: []string{LegacyTagType, LegacyTagCluster, LegacyTagPod}}},
		"after delay": {policy: networkingv1alpha1.PodElasticIPReleaseAfterDelay, mode: auto, a: tagged,
			want: DeletePlan{Disassociate: true, Tags: map[string]string{TagReleaseAfter: "2026-01-01T00:10:00Z"}}},
		"after delay on a never adopted legacy auto address releases it": {policy: networkingv1alpha1.PodElasticIPReleaseAfterDelay, mode: auto,
			a:    addr("eipalloc-1", map[string]string{LegacyTagType: "auto", LegacyTagPod: "ns/web-0", LegacyTagCluster: "legacy"}),
			want: DeletePlan{Release: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PlanDelete(tc.policy, tc.mode, tc.a, now, 10*time.Minute)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("PlanDelete (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSweep(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		a    Address
		want SweepVerdict
	}{
		"auto": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Auto"}),
			want: SweepVerdict{OwnerUID: "u", Release: true}},
		"pool": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Pool"}),
			want: SweepVerdict{OwnerUID: "u"}},
		"kept": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Auto", TagReleaseAfter: "2026-01-01T00:10:00Z"}),
			want: SweepVerdict{Skip: true}},
		"kept past its delay": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Auto", TagReleaseAfter: "2025-12-31T23:00:00Z"}),
			want: SweepVerdict{OwnerUID: "u", Release: true, BornAt: time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)}},
		"another kind's address": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: "AnycastIPBinding"}), want: SweepVerdict{Skip: true}},
		"auto, management policies without Delete": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Auto",
			TagDeletionPolicy: DeletionPolicyOrphan}),
			want: SweepVerdict{OwnerUID: "u", Release: true, ReportOnly: reportOnlyOrphan}},
		"pool, management policies without Delete": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Pool",
			TagDeletionPolicy: DeletionPolicyOrphan}),
			want: SweepVerdict{OwnerUID: "u", ReportOnly: reportOnlyOrphan}},
		"another deletion policy value": {a: addr("eipalloc-1", map[string]string{TagOwnerKind: OwnerKind, TagOwnerUID: "u", TagMode: "Auto",
			TagDeletionPolicy: "Delete"}),
			want: SweepVerdict{OwnerUID: "u", Release: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Sweep(tc.a, now)); diff != "" {
				t.Fatalf("Sweep (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSweepScope(t *testing.T) {
	ours := Tags(owner(auto)) // cluster c1, namespace ns
	cases := map[string]struct {
		tags      map[string]string
		namespace string // "": a ClusterProviderConfig's account
		want      bool
	}{
		"cluster sweep: this cluster's address":                  {tags: ours, want: true},
		"cluster sweep: created before the namespace tag":        {tags: withoutTag(addr("a", ours), TagNamespace).Tags, want: true},
		"cluster sweep: another cluster's":                       {tags: map[string]string{TagCluster: "c2", TagNamespace: "ns"}},
		"cluster sweep: a person's":                              {tags: map[string]string{"Name": "mine"}},
		"tenant sweep: its namespace's":                          {tags: ours, namespace: "ns", want: true},
		"tenant sweep: another tenant's":                         {tags: ours, namespace: "other"},
		"tenant sweep: created before the namespace tag":         {tags: withoutTag(addr("a", ours), TagNamespace).Tags, namespace: "ns"},
		"tenant sweep: another cluster's in its namespace":       {tags: map[string]string{TagCluster: "c2", TagNamespace: "ns"}, namespace: "ns"},
		"tenant sweep: a person's":                               {tags: map[string]string{"Name": "mine"}, namespace: "ns"},
		"tenant sweep: a namespace tag without the cluster's":    {tags: map[string]string{TagNamespace: "ns"}, namespace: "ns"},
		"tenant sweep: an empty namespace tag is no namespace's": {tags: map[string]string{TagCluster: "c1", TagNamespace: ""}, namespace: "ns"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := InSweepScope(addr("eipalloc-1", tc.tags), "c1", tc.namespace); got != tc.want {
				t.Fatalf("InSweepScope = %v, want %v", got, tc.want)
			}
		})
	}
	if diff := cmp.Diff(map[string]string{TagCluster: "c1", TagNamespace: "ns"}, SweepTags("c1", "ns")); diff != "" {
		t.Errorf("a tenant's SweepTags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{TagCluster: "c1"}, SweepTags("c1", "")); diff != "" {
		t.Errorf("a cluster's SweepTags (-want +got):\n%s", diff)
	}
}

func TestSweepLegacy(t *testing.T) {
	legacyTags := func(extra map[string]string) map[string]string {
		m := map[string]string{LegacyTagCluster: "legacy", LegacyTagPod: "ns/web-0", LegacyTagType: "auto"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := map[string]struct {
		a      Address
		legacy string
		want   LegacyVerdict
	}{
		"legacy only": {a: addr("eipalloc-1", legacyTags(nil)), legacy: "legacy",
			want: LegacyVerdict{Pod: "ns/web-0", Namespace: "ns", OwnerUID: "legacy-pod:ns/web-0"}},
		"pool address claimed by the legacy controller": {a: addr("eipalloc-1", legacyTags(map[string]string{LegacyTagType: "fixed-tag", "pool": ""})), legacy: "legacy",
			want: LegacyVerdict{Pod: "ns/web-0", Namespace: "ns", OwnerUID: "legacy-pod:ns/web-0"}},
		"malformed pod tag: no owner can exist": {a: addr("eipalloc-1", legacyTags(map[string]string{LegacyTagPod: "web-0"})), legacy: "legacy",
			want: LegacyVerdict{Pod: "web-0", OwnerUID: "legacy-pod:web-0"}},
		"adopted (edgeplane's tags)": {a: addr("eipalloc-1", legacyTags(Tags(owner(auto)))), legacy: "legacy", want: LegacyVerdict{Skip: true}},
		"edgeplane owner tag only":   {a: addr("eipalloc-1", legacyTags(map[string]string{TagOwnerUID: "u"})), legacy: "legacy", want: LegacyVerdict{Skip: true}},
		"another legacy cluster":     {a: addr("eipalloc-1", legacyTags(nil)), legacy: "other", want: LegacyVerdict{Skip: true}},
		"no legacy name":             {a: addr("eipalloc-1", legacyTags(nil)), want: LegacyVerdict{Skip: true}},
		"no pod tag":                 {a: addr("eipalloc-1", map[string]string{LegacyTagCluster: "legacy"}), legacy: "legacy", want: LegacyVerdict{Skip: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SweepLegacy(tc.a, tc.legacy)); diff != "" {
				t.Fatalf("SweepLegacy (-want +got):\n%s", diff)
			}
		})
	}
}

// pending marks a the way a Tencent Cloud task leaves it: state, and for
// BINDING the target.
func pending(a Address, state, ip string) Address {
	a.Pending, a.AssociationID = state, ""
	if state == PendingBinding {
		a.NetworkInterfaceID, a.PrivateIPAddress = "eni-1", ip
	}
	return a
}

// TestDecidePending: nothing is done to an address a cloud task runs on,
// and the waiting pass carries the Ready message of the step that started
// the task (so it writes nothing new); deletion still owns it.
func TestDecidePending(t *testing.T) {
	o := owner(auto)
	o.ExternalName = "eipalloc-1"
	running := Pod{Found: true, Phase: corev1.PodRunning, IP: "10.0.0.5", UID: "p1"}
	ours := addr("eipalloc-1", Tags(o))
	ours.PublicIP = "198.19.0.7"
	cases := map[string]struct {
		in      PlanInput
		wantMsg string
		want    Plan
	}{
		"allocating": {
			in:      PlanInput{Owner: o, Pod: running, Addr: ptrTo(pending(ours, PendingCreating, "")), Match: MatchExternalName},
			wantMsg: MessageAllocating,
			want:    Plan{Exists: true, UpToDate: true, Wait: true, Addr: ptrTo(pending(ours, PendingCreating, "")), Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"binding to the pod": {
			in:      PlanInput{Owner: o, Pod: running, Addr: ptrTo(pending(ours, PendingBinding, "10.0.0.5")), Match: MatchExternalName},
			wantMsg: AssociatingMessage("198.19.0.7", "10.0.0.5"),
			want:    Plan{Exists: true, UpToDate: true, Wait: true, Addr: ptrTo(pending(ours, PendingBinding, "10.0.0.5")), Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"unbinding while the pod has a new IP: wait, then follow": {
			in:      PlanInput{Owner: o, Pod: running, Addr: ptrTo(pending(ours, PendingUnbinding, "")), Match: MatchExternalName},
			wantMsg: "waiting for eipalloc-1: it is UNBINDING",
			want:    Plan{Exists: true, UpToDate: true, Wait: true, Addr: ptrTo(pending(ours, PendingUnbinding, "")), Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"found by UID while allocating: record the external name, wait": {
			in:      PlanInput{Owner: func() Owner { o := o; o.ExternalName = ""; return o }(), Pod: running, Addr: ptrTo(pending(ours, PendingCreating, "")), Match: MatchOwnerUID},
			wantMsg: MessageAllocating,
			want: Plan{Exists: true, UpToDate: true, Wait: true, LateInit: true, Addr: ptrTo(pending(ours, PendingCreating, "")),
				Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, "")},
		},
		"deleting while released: still owned until gone": {
			in:   PlanInput{Owner: o, Deleting: true, Addr: ptrTo(pending(ours, PendingReleasing, "")), Match: MatchExternalName},
			want: Plan{Exists: true, UpToDate: true, Addr: ptrTo(pending(ours, PendingReleasing, "")), Ready: xpv2.Deleting()},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Decide(tc.in)
			if tc.wantMsg != "" && got.Ready.Message != tc.wantMsg {
				t.Errorf("Ready message = %q, want %q", got.Ready.Message, tc.wantMsg)
			}
			got.Ready.Message = ""
			got.Ready.LastTransitionTime = metav1.Time{}
			tc.want.Ready.LastTransitionTime = metav1.Time{}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func ptrTo(a Address) *Address { return &a }

// TestCandidatesSkipBusyAddresses: a pool address a task runs on (another
// claimer binding it) is no candidate; a static one is in use unless it is
// being bound to this pod's IP.
func TestCandidatesSkipBusyAddresses(t *testing.T) {
	o := owner(pool)
	p := allowing(t, "pool-key")
	free := addr("eip-00000001", map[string]string{"pool-key": ""})
	binding := pending(addr("eip-00000002", map[string]string{"pool-key": ""}), PendingBinding, "10.0.0.9")
	creating := pending(addr("eip-00000003", map[string]string{"pool-key": ""}), PendingCreating, "")
	got, _ := PoolCandidates([]Address{free, binding, creating}, o, p)
	if len(got) != 1 || got[0].AllocationID != "eip-00000001" {
		t.Fatalf("PoolCandidates = %v, want only the settled free address", got)
	}
	s := owner(static)
	tagged := addr("eip-00000004", map[string]string{"pool-key": "ns/web-0"})
	if a, why := StaticCandidate([]Address{pending(tagged, PendingBinding, "10.0.0.9")}, s, "10.0.0.5", p); a != nil || why.Reason != "AddressInUse" {
		t.Errorf("static address being bound elsewhere: %v, %+v; want AddressInUse", a, why)
	}
	if a, why := StaticCandidate([]Address{pending(tagged, PendingUnbinding, "")}, s, "10.0.0.5", p); a != nil || why.Reason != "AddressInUse" {
		t.Errorf("static address being unbound: %v, %+v; want AddressInUse", a, why)
	}
	if a, why := StaticCandidate([]Address{pending(tagged, PendingBinding, "10.0.0.5")}, s, "10.0.0.5", p); a == nil || why.Refused() {
		t.Errorf("static address being bound to the pod: %v, %+v; want it", a, why)
	}
}
