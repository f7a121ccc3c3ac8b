package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func TestClusterPolicySpec(t *testing.T) {
	all, selected := schedulingv1alpha1.GovernsAllPods, schedulingv1alpha1.GovernsSelectedPods
	eks := schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS}
	cases := []struct {
		name    string
		data    map[string]string
		want    schedulingv1alpha1.ClusterBurstPolicySpec
		wantErr bool
	}{
		{name: "no key: the switch is unset, which is on", data: map[string]string{"OTHER": "x"}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Governs: all, VirtualNodes: eks}},
		{name: "empty value: unset", data: map[string]string{"AUTO_SCALE_EKS": ""}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Governs: all, VirtualNodes: eks}},
		{name: "on", data: map[string]string{"AUTO_SCALE_EKS": "true"}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(true), Governs: all, VirtualNodes: eks}},
		{name: "on as the chart renders it", data: map[string]string{"AUTO_SCALE_EKS": `"true"`}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(true), Governs: all, VirtualNodes: eks}},
		{name: "off", data: map[string]string{"AUTO_SCALE_EKS": "false"}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false), Governs: selected, VirtualNodes: eks}},
		{name: "bad", data: map[string]string{"AUTO_SCALE_EKS": "maybe"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ClusterPolicySpec(tc.data)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ClusterPolicySpec() err=%v, want err=%v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ClusterPolicySpec (-want +got):\n%s", diff)
			}
		})
	}
}
