package decide

import (
	"testing"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

func TestClusterWide(t *testing.T) {
	on := Switch{Burst: true, LocalReplicasEffective: true}
	refused := Refusal{Reason: schedulingv1alpha1.NotBurstableReservedPort, Message: "port 61000"}
	cases := []struct {
		name string
		pod  UngovernedPod
		want ClusterWideStep
	}{
		{name: "unschedulable, switched on: bursts", pod: UngovernedPod{Unschedulable: true, Switch: on}, want: ClusterWideStep{Burst: true}},
		{name: "pending, not reported unschedulable yet: waits", pod: UngovernedPod{Switch: on}},
		{name: "unschedulable, switched off: left unmarked", pod: UngovernedPod{Unschedulable: true}},
		{name: "unschedulable, refused: marked with the reason", pod: UngovernedPod{Unschedulable: true, Switch: on, Refusal: refused},
			want: ClusterWideStep{NotBurstable: schedulingv1alpha1.NotBurstableReservedPort}},
		{name: "gated: its policy decides", pod: UngovernedPod{Gated: true, Unschedulable: true, Switch: on}, want: ClusterWideStep{Skip: true}},
		{name: "pending with a floor: its policy decides", pod: UngovernedPod{Floor: true, Unschedulable: true, Switch: on}, want: ClusterWideStep{Skip: true}},
		{name: "burst pod with a floor, bound virtual: marks kept", pod: UngovernedPod{Floor: true, Placement: Virtual, Burst: true, Marked: true}, want: ClusterWideStep{MarkBurst: true}},
		{name: "pending with tolerations of its own: left alone", pod: UngovernedPod{Burst: true, Unschedulable: true, Switch: on}},
		{name: "pending, burst by edgeplane: marks kept", pod: UngovernedPod{Burst: true, Marked: true, Switch: on}, want: ClusterWideStep{MarkBurst: true}},
		{name: "bound virtual, burst by edgeplane", pod: UngovernedPod{Placement: Virtual, Burst: true, Marked: true}, want: ClusterWideStep{MarkBurst: true}},
		{name: "bound local, never burst: nothing", pod: UngovernedPod{Placement: Local}},
		{name: "bound after a refusal: the reason goes", pod: UngovernedPod{Placement: Local, Refusal: refused}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterWide(tc.pod); got != tc.want {
				t.Errorf("ClusterWide = %+v, want %+v", got, tc.want)
			}
		})
	}
}
