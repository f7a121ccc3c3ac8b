package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func TestClusterPolicySpec(t *testing.T) {
	cases := []struct {
		name    string
		data    map[string]string
		want    schedulingv1alpha1.ClusterBurstPolicySpec
		wantOK  bool
		wantErr bool
	}{
		{name: "no key", data: map[string]string{"OTHER": "x"}},
		{name: "on", data: map[string]string{"AUTO_SCALE_EKS": "true"}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(true)}, wantOK: true},
		{name: "off", data: map[string]string{"AUTO_SCALE_EKS": "false"}, want: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false)}, wantOK: true},
		{name: "bad", data: map[string]string{"AUTO_SCALE_EKS": "maybe"}, wantOK: true, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ClusterPolicySpec(tc.data)
			if ok != tc.wantOK || (err != nil) != tc.wantErr {
				t.Fatalf("ClusterPolicySpec() ok=%v err=%v, want ok=%v err=%v", ok, err, tc.wantOK, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ClusterPolicySpec (-want +got):\n%s", diff)
			}
		})
	}
}
