package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestParse(t *testing.T) {
	auto := networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto}
	cases := map[string]struct {
		ann         map[string]string
		want        Desired
		wantInvalid string
	}{
		"absent":            {ann: map[string]string{"x": "y"}, want: Desired{}},
		"pool without type": {ann: map[string]string{PublicIPv4Pool: "amazon"}, want: Desired{}},
		"auto":              {ann: map[string]string{Type: "auto"}, want: Desired{Present: true, Allocation: auto}},
		"auto with pool": {ann: map[string]string{Type: "auto", PublicIPv4Pool: "amazon-staticbgp"},
			want: Desired{Present: true, Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto, PublicIPv4Pool: "amazon-staticbgp"}}},
		"auto with spaces": {ann: map[string]string{Type: " auto "}, want: Desired{Present: true, Allocation: auto}},
		"fixed-tag": {ann: map[string]string{Type: "fixed-tag", FixedTag: "pec-ip-pool"},
			want: Desired{Present: true, Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "pec-ip-pool"}}},
		"fixed-tag-value": {ann: map[string]string{Type: "fixed-tag-value", FixedTagValue: "pec-ip-pool"},
			want: Desired{Present: true, Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "pec-ip-pool"}}},
		"unknown type":      {ann: map[string]string{Type: "random"}, wantInvalid: `unknown value "random"`},
		"empty type":        {ann: map[string]string{Type: ""}, wantInvalid: "unknown value"},
		"fixed-tag no key":  {ann: map[string]string{Type: "fixed-tag"}, wantInvalid: "type fixed-tag needs the tag key"},
		"fixed-tag aws key": {ann: map[string]string{Type: "fixed-tag", FixedTag: "aws:x"}, wantInvalid: "reserved by AWS"},
		"fixed-tag-value key in fixed-tag (legacy #327)": {ann: map[string]string{Type: "fixed-tag-value", FixedTag: "pec-ip-pool"},
			wantInvalid: "which only fixed-tag reads"},
		"pool too long":   {ann: map[string]string{Type: "auto", PublicIPv4Pool: strings.Repeat("p", 65)}, wantInvalid: "at most 64"},
		"pool with space": {ann: map[string]string{Type: "auto", PublicIPv4Pool: "a b"}, wantInvalid: "printable ASCII"},
		"edgeplane key":   {ann: map[string]string{Type: "fixed-tag-value", FixedTagValue: "edgeplane.io/cluster"}, wantInvalid: "edgeplane's own"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Parse(tc.ann)
			if tc.wantInvalid != "" {
				if !strings.Contains(got.Invalid, tc.wantInvalid) || !got.Present || got.Allocation != auto {
					t.Fatalf("Parse = %+v, want present, placeholder Auto and Invalid containing %q", got, tc.wantInvalid)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	cases := map[string]struct {
		a    networkingv1alpha1.PodElasticIPAllocation
		want map[string]string
	}{
		"auto": {a: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto},
			want: map[string]string{LabelPublicIP: "198.18.0.1", LabelType: "auto"}},
		"auto with pool": {a: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto, PublicIPv4Pool: "byoip"},
			want: map[string]string{LabelPublicIP: "198.18.0.1", LabelType: "auto", LabelPool: "byoip"}},
		"pool": {a: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "pec-ip-pool"},
			want: map[string]string{LabelPublicIP: "198.18.0.1", LabelType: "fixed-tag", LabelFixedTag: "pec-ip-pool"}},
		"static": {a: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "k"},
			want: map[string]string{LabelPublicIP: "198.18.0.1", LabelType: "fixed-tag-value", LabelFixedTagValue: "k"}},
		"static by ID": {a: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eipalloc-12345678"},
			want: map[string]string{LabelPublicIP: "198.18.0.1", LabelType: "fixed-tag-value"}},
		"tag key not a label value (legacy bug)": {a: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: "team/pool:a"},
			want: map[string]string{LabelPublicIP: "198.18.0.1", LabelType: "fixed-tag"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Labels(tc.a, "198.18.0.1")); diff != "" {
				t.Fatalf("Labels (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParse proves the parser never panics, always yields an allocation the
// API accepts, and never produces an invalid label.
func FuzzParse(f *testing.F) {
	f.Add("auto", "", "", "")
	f.Add("auto", "amazon-staticbgp", "", "")
	f.Add("fixed-tag", "", "pec-ip-pool", "")
	f.Add("fixed-tag-value", "", "pec-ip-pool", "k")
	f.Add("bogus", "\x00", "aws:x", "edgeplane.io/x")
	f.Fuzz(func(t *testing.T, typ, pool, tag, tagValue string) {
		d := Parse(map[string]string{Type: typ, PublicIPv4Pool: pool, FixedTag: tag, FixedTagValue: tagValue})
		if !d.Present {
			t.Fatal("type annotation present but Present is false")
		}
		a := d.Allocation
		switch a.Mode {
		case networkingv1alpha1.PodElasticIPModeAuto:
			if a.TagKey != "" || a.AllocationID != "" || checkPool(a.PublicIPv4Pool) != "" {
				t.Fatalf("invalid Auto allocation %+v", a)
			}
		case networkingv1alpha1.PodElasticIPModePool, networkingv1alpha1.PodElasticIPModeStatic:
			if d.Invalid != "" || a.TagKey == "" || CheckTagKey(a.TagKey) != "" || a.PublicIPv4Pool != "" {
				t.Fatalf("invalid %s allocation %+v (invalid %q)", a.Mode, a, d.Invalid)
			}
		default:
			t.Fatalf("unknown mode %q", a.Mode)
		}
		for k, v := range Labels(a, "198.18.0.1") {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Fatalf("label %s=%q invalid: %v", k, v, errs)
			}
		}
	})
}
