package decide

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestCheckProvider(t *testing.T) {
	const aws, tencent = cloudv1alpha1.ProviderAWS, cloudv1alpha1.ProviderTencentCloud
	auto := networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto}
	static := func(id string) networkingv1alpha1.PodElasticIPAllocation {
		return networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: id}
	}
	pool := func(key string) networkingv1alpha1.PodElasticIPAllocation {
		return networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: key}
	}
	cases := []struct {
		name     string
		provider cloudv1alpha1.Provider
		spec     networkingv1alpha1.PodElasticIPSpec
		want     xpv2.ConditionReason
	}{
		{"aws auto", aws, networkingv1alpha1.PodElasticIPSpec{Allocation: auto}, ""},
		{"aws pool with BYOIP", aws, networkingv1alpha1.PodElasticIPSpec{Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: "Auto", PublicIPv4Pool: "byoip"}}, ""},
		{"aws static by allocation ID", aws, networkingv1alpha1.PodElasticIPSpec{Allocation: static("eipalloc-0123456789abcdef0")}, ""},
		{"aws tags Tencent keeps are AWS's business", aws, networkingv1alpha1.PodElasticIPSpec{Allocation: pool("project"), Tags: map[string]string{"qcloud:x": "y"}}, ""},
		{"aws with a tencent block", aws, networkingv1alpha1.PodElasticIPSpec{Allocation: auto, Tencent: &networkingv1alpha1.PodElasticIPTencent{}},
			networkingv1alpha1.PodElasticIPReasonProviderMismatch},
		{"aws static by a Tencent ID", aws, networkingv1alpha1.PodElasticIPSpec{Allocation: static("eip-0a1b2c3d")}, networkingv1alpha1.PodElasticIPReasonProviderMismatch},
		{"tencent auto", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: auto}, ""},
		{"tencent auto with a block", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: auto, Tencent: &networkingv1alpha1.PodElasticIPTencent{}}, ""},
		{"tencent static by address ID", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: static("eip-0a1b2c3d")}, ""},
		{"tencent pool", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: pool("pec-ip-pool"), Tags: map[string]string{"team": "edge"}}, ""},
		{"tencent with a public IPv4 pool", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: "Auto", PublicIPv4Pool: "amazon"}},
			networkingv1alpha1.PodElasticIPReasonProviderMismatch},
		{"tencent static by an EC2 ID", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: static("eipalloc-0123456789abcdef0")},
			networkingv1alpha1.PodElasticIPReasonProviderMismatch},
		{"tencent reserved tag key", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: auto, Tags: map[string]string{"team": "a", "QCloud:app": "b"}},
			networkingv1alpha1.PodElasticIPReasonInvalidSpec},
		{"tencent reserved pool key", tencent, networkingv1alpha1.PodElasticIPSpec{Allocation: pool("project-pool")}, networkingv1alpha1.PodElasticIPReasonInvalidSpec},
		{"unknown cloud", "gcp", networkingv1alpha1.PodElasticIPSpec{Allocation: auto}, networkingv1alpha1.PodElasticIPReasonProviderMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := CheckProvider(tc.provider, tc.spec)
			if got != tc.want || (got != "") != (msg != "") {
				t.Errorf("CheckProvider = %q, %q; want reason %q", got, msg, tc.want)
			}
		})
	}
}
