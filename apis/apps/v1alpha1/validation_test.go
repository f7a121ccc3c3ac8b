package v1alpha1_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func valid(name string) *appsv1alpha1.IngressDaemonSet {
	return &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingress"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ingress", "tier": "edge"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
			ReplicasPerNode:      2,
			HealthCheckNodePorts: []int32{10080},
		},
	}
}

func withRollingUpdate(name string, ru appsv1alpha1.RollingUpdate) *appsv1alpha1.IngressDaemonSet {
	o := valid(name)
	o.Spec.UpdateStrategy.RollingUpdate = &ru
	return o
}

// TestCreateValidation proves each rule rejects a bad object and lets a good one through.
func TestCreateValidation(t *testing.T) {
	detach := &appsv1alpha1.DetachAnnotation{Key: "node-detacher.variant.run/detached", Value: "true", GracePeriodSeconds: 10}
	cases := map[string]struct {
		obj     *appsv1alpha1.IngressDaemonSet
		wantErr string // empty: must be accepted
	}{
		"minimal":       {obj: valid("minimal")},
		"degraded mode": {obj: withRollingUpdate("degraded", appsv1alpha1.RollingUpdate{MaxDegradedNodes: ptr.To[int32](3), MaxUnavailablePodsPerNode: ptr.To(intstr.FromString("50%")), MaxSurgedPodsPerNode: ptr.To(intstr.FromInt32(1))})},
		"detach mode": {obj: withRollingUpdate("detach", appsv1alpha1.RollingUpdate{
			MaxUnavailableNodes:                   ptr.To[int32](2),
			MaxDegradedNodes:                      ptr.To[int32](0),
			AnnotateNodeToDetach:                  detach,
			WaitForDetachmentByAnnotatedTimestamp: &appsv1alpha1.DetachmentTimestamp{Key: "node-detacher.variant.run/detachment-timestamp", GracePeriodSeconds: 30},
			AnnotateDeploymentToDetach:            &appsv1alpha1.DetachAnnotation{Key: "apps.edgeplane.io/to-be-updated", GracePeriodSeconds: 5},
		})},
		"degraded mode with deployment detach": {obj: withRollingUpdate("degraded-detach", appsv1alpha1.RollingUpdate{AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: "x/y", GracePeriodSeconds: 2}})},
		"both node budgets": {obj: withRollingUpdate("both", appsv1alpha1.RollingUpdate{MaxUnavailableNodes: ptr.To[int32](2), MaxDegradedNodes: ptr.To[int32](3)}),
			wantErr: "maxUnavailableNodes >= 1 requires maxDegradedNodes to be 0 or unset"},
		"no node budget": {obj: withRollingUpdate("none", appsv1alpha1.RollingUpdate{MaxDegradedNodes: ptr.To[int32](0)}),
			wantErr: "one of maxUnavailableNodes and maxDegradedNodes must be at least 1"},
		"node detach without detach mode": {obj: withRollingUpdate("node-detach", appsv1alpha1.RollingUpdate{AnnotateNodeToDetach: detach}),
			wantErr: "annotateNodeToDetach requires maxUnavailableNodes >= 1"},
		"timestamp wait without node annotation": {obj: withRollingUpdate("ts-only", appsv1alpha1.RollingUpdate{
			MaxUnavailableNodes:                   ptr.To[int32](1),
			WaitForDetachmentByAnnotatedTimestamp: &appsv1alpha1.DetachmentTimestamp{Key: "a/b"},
		}), wantErr: "waitForDetachmentByAnnotatedTimestamp requires annotateNodeToDetach"},
		"unknown timestamp format": {obj: withRollingUpdate("ts-format", appsv1alpha1.RollingUpdate{
			MaxUnavailableNodes:                   ptr.To[int32](1),
			AnnotateNodeToDetach:                  detach,
			WaitForDetachmentByAnnotatedTimestamp: &appsv1alpha1.DetachmentTimestamp{Key: "a/b", Format: "Unix"},
		}), wantErr: `Unsupported value: "Unix"`},
		"bad annotation key": {obj: withRollingUpdate("bad-key", appsv1alpha1.RollingUpdate{AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: "not a key"}}),
			wantErr: "spec.updateStrategy.rollingUpdate.annotateDeploymentToDetach.key"},
		"negative partition": {obj: withRollingUpdate("partition", appsv1alpha1.RollingUpdate{Partition: ptr.To[int32](-1)}),
			wantErr: "spec.updateStrategy.rollingUpdate.partition"},
		"zero replicas per node": {obj: func() *appsv1alpha1.IngressDaemonSet {
			o := valid("zero")
			o.Spec.ReplicasPerNode = -1
			return o
		}(), wantErr: "spec.replicasPerNode"},
		"template with nodeName": {obj: func() *appsv1alpha1.IngressDaemonSet {
			o := valid("nodename")
			o.Spec.Template.Spec.NodeName = "w1"
			return o
		}(), wantErr: "template.spec.nodeName must not be set"},
		"port out of range": {obj: func() *appsv1alpha1.IngressDaemonSet {
			o := valid("port")
			o.Spec.HealthCheckNodePorts = []int32{70000}
			return o
		}(), wantErr: "spec.healthCheckNodePorts[0]"},
		"duplicate ports": {obj: func() *appsv1alpha1.IngressDaemonSet {
			o := valid("dupports")
			o.Spec.HealthCheckNodePorts = []int32{10080, 10080}
			return o
		}(), wantErr: "Duplicate value"},
		"unknown strategy": {obj: func() *appsv1alpha1.IngressDaemonSet {
			o := valid("strategy")
			o.Spec.UpdateStrategy.Type = "OnDelete"
			return o
		}(), wantErr: `Unsupported value: "OnDelete"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { env.ExpectCreate(t, tc.obj, tc.wantErr) })
	}
}

// TestDefaultsAndLabelsKept proves the defaults apply and template labels survive pruning.
func TestDefaultsAndLabelsKept(t *testing.T) {
	ctx := testenv.Context(t)
	o := valid("defaults")
	o.Spec.ReplicasPerNode = 0
	if err := env.Client.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
	got := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, clientKey(o), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.ReplicasPerNode != 1 {
		t.Errorf("replicasPerNode = %d, want default 1", got.Spec.ReplicasPerNode)
	}
	if got.Spec.UpdateStrategy.Type != appsv1alpha1.RollingUpdateStrategyType {
		t.Errorf("updateStrategy.type = %q, want RollingUpdate", got.Spec.UpdateStrategy.Type)
	}
	if got.Spec.Template.Metadata.Labels["tier"] != "edge" {
		t.Errorf("template labels pruned: %v", got.Spec.Template.Metadata.Labels)
	}
}

// TestSelectorIsImmutable proves the selector cannot change (Deployment selectors cannot).
func TestSelectorIsImmutable(t *testing.T) {
	ctx := testenv.Context(t)
	o := valid("immutable")
	if err := env.Client.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.Spec.Selector.MatchLabels = map[string]string{"tier": "edge"}
	err := env.Client.Update(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "selector is immutable") {
		t.Fatalf("changing the selector: got %v, want 'selector is immutable'", err)
	}
}

func clientKey(o *appsv1alpha1.IngressDaemonSet) client.ObjectKey {
	return client.ObjectKeyFromObject(o)
}
