package v1alpha1_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func validPolicy(name string) *schedulingv1alpha1.BurstPolicy {
	return &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			TargetRef:     &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
			LocalReplicas: 1,
		},
	}
}

func mutate(name string, f func(*schedulingv1alpha1.BurstPolicy)) client.Object {
	p := validPolicy(name)
	f(p)
	return p
}

// TestCreateValidation proves each rule rejects a bad object and lets a good one through.
func TestCreateValidation(t *testing.T) {
	cases := map[string]struct {
		obj     client.Object
		wantErr string // empty: must be accepted
	}{
		"valid targetRef policy": {obj: validPolicy("ok-target")},
		"valid selector policy": {obj: mutate("ok-selector", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.TargetRef = nil
			p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
		})},
		"valid custom virtual nodes": {obj: mutate("ok-custom", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.VirtualNodes = schedulingv1alpha1.VirtualNodes{
				Preset:       schedulingv1alpha1.PresetCustom,
				NodeSelector: map[string]string{"type": "virtual-kubelet"},
				Tolerations:  []corev1.Toleration{{Key: "virtual-kubelet.io/provider", Operator: corev1.TolerationOpExists}},
			}
		})},
		"valid burstAfter and cap": {obj: mutate("ok-after", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.BurstAfter = &metav1.Duration{Duration: 90 * time.Second}
			p.Spec.MaxBurstReplicas = ptr.To[int32](10)
		})},
		"both targetRef and selector": {obj: mutate("both", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
		}), wantErr: "exactly one of targetRef and selector must be set"},
		"neither targetRef nor selector": {obj: mutate("neither", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.TargetRef = nil
		}), wantErr: "exactly one of targetRef and selector must be set"},
		"negative local replicas": {obj: mutate("neg-local", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.LocalReplicas = -1
		}), wantErr: "spec.localReplicas"},
		"negative max burst": {obj: mutate("neg-max", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.MaxBurstReplicas = ptr.To[int32](-1)
		}), wantErr: "spec.maxBurstReplicas"},
		"negative burstAfter": {obj: mutate("neg-after", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.BurstAfter = &metav1.Duration{Duration: -time.Second}
		}), wantErr: "burstAfter must be between 0s and 24h"},
		"burstAfter over a day": {obj: mutate("long-after", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.BurstAfter = &metav1.Duration{Duration: 25 * time.Hour}
		}), wantErr: "burstAfter must be between 0s and 24h"},
		"custom preset without node selector": {obj: mutate("custom-nosel", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.VirtualNodes = schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetCustom}
		}), wantErr: "nodeSelector is required with preset Custom"},
		"preset with tolerations": {obj: mutate("preset-tol", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.VirtualNodes = schedulingv1alpha1.VirtualNodes{
				Preset:      schedulingv1alpha1.PresetTencentEKS,
				Tolerations: []corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}},
			}
		}), wantErr: "nodeSelector is required with preset Custom"},
		"unknown trigger": {obj: mutate("bad-trigger", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Trigger = "Sometimes"
		}), wantErr: `spec.trigger: Unsupported value: "Sometimes"`},
		"unknown scale-in policy": {obj: mutate("bad-scalein", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.ScaleIn = "LocalFirst"
		}), wantErr: `spec.scaleIn: Unsupported value: "LocalFirst"`},
		"unknown preset": {obj: mutate("bad-preset", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.VirtualNodes.Preset = "Fargate"
		}), wantErr: `spec.virtualNodes.preset: Unsupported value: "Fargate"`},
		"target without kind": {obj: mutate("no-kind", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.TargetRef.Kind = ""
		}), wantErr: "spec.targetRef.kind"},
		"valid rebalance": {obj: mutate("ok-rebalance", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Rebalance = &schedulingv1alpha1.Rebalance{Enabled: true, After: &metav1.Duration{Duration: 5 * time.Minute}}
		})},
		"rebalance off without after": {obj: mutate("ok-rebalance-off", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.LocalReplicas = 0
			p.Spec.Rebalance = &schedulingv1alpha1.Rebalance{}
		})},
		"rebalance without a floor": {obj: mutate("rebalance-nofloor", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.LocalReplicas = 0
			p.Spec.Rebalance = &schedulingv1alpha1.Rebalance{Enabled: true}
		}), wantErr: "rebalance needs localReplicas > 0"},
		"rebalance after while off": {obj: mutate("rebalance-after-off", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Rebalance = &schedulingv1alpha1.Rebalance{After: &metav1.Duration{Duration: time.Minute}}
		}), wantErr: "after is only allowed with enabled: true"},
		"negative rebalance after": {obj: mutate("rebalance-neg", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Rebalance = &schedulingv1alpha1.Rebalance{Enabled: true, After: &metav1.Duration{Duration: -time.Second}}
		}), wantErr: "after must be between 0s and 24h"},
		"rebalance after over a day": {obj: mutate("rebalance-long", func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Rebalance = &schedulingv1alpha1.Rebalance{Enabled: true, After: &metav1.Duration{Duration: 25 * time.Hour}}
		}), wantErr: "after must be between 0s and 24h"},
		"cluster default named default": {obj: &schedulingv1alpha1.ClusterBurstPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec:       schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false)},
		}},
		"cluster default with another name": {obj: &schedulingv1alpha1.ClusterBurstPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "global"},
		}, wantErr: "the ClusterBurstPolicy is a singleton and must be named default"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { env.ExpectCreate(t, tc.obj, tc.wantErr) })
	}
}

// TestDefaults proves the API server fills in the documented defaults.
func TestDefaults(t *testing.T) {
	ctx := testenv.Context(t)
	p := validPolicy("defaults")
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatalf("creating: %v", err)
	}
	want := schedulingv1alpha1.BurstPolicySpec{
		TargetRef:     p.Spec.TargetRef,
		LocalReplicas: 1,
		Trigger:       schedulingv1alpha1.TriggerUnschedulable,
		VirtualNodes:  schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS},
		ScaleIn:       schedulingv1alpha1.ScaleInBurstFirst,
	}
	if diff := cmp.Diff(want, p.Spec); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}

	d := &schedulingv1alpha1.ClusterBurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		// The validation test may not have run first; create it.
		if err := env.Client.Create(ctx, d); err != nil {
			t.Fatalf("creating the cluster default: %v", err)
		}
	}
	if diff := cmp.Diff([]string{"kube-system", "tke-eni-ip-webhook"}, d.Spec.ExcludedNamespaces); diff != "" {
		t.Errorf("defaulted excludedNamespaces (-want +got):\n%s", diff)
	}
}
