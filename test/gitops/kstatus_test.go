// Package gitops_test proves that every edgeplane kind is kstatus-compliant,
// which is what Flux health checks, Argo CD (through kstatus-based tools) and
// cli-utils appliers rely on: each example CR of examples/ is run through
// kstatus in its in-progress, ready and failed states, on a real API server,
// and `kubectl wait --for=condition=Ready` is run against it.
package gitops_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// conditioned is a cloud config kind with crossplane conditions.
type conditioned interface {
	client.Object
	SetConditions(...xpv2.Condition)
}

// State setters: the same helpers the controllers use for in-cluster kinds;
// for provider configs, the conditions the providerconfig controller writes.
func setState(t *testing.T, obj client.Object, state string) {
	t.Helper()
	switch o := obj.(type) {
	case status.Object:
		switch state {
		case "waiting":
			status.SetReady(o, metav1.ConditionFalse, "Waiting", "waiting for something")
		case "ready":
			status.SetReady(o, metav1.ConditionTrue, "Ready", "ready")
		case "failed":
			status.SetStalled(o, "InvalidSpec", "a person must fix the spec")
		}
		status.ObserveGeneration(o)
	case conditioned:
		ready := xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: "Waiting", LastTransitionTime: metav1.Now()}
		if state == "ready" {
			ready.Status = corev1.ConditionTrue
		}
		o.SetConditions(ready)
		o.SetConditions(status.ManagedKstatus(ready, state == "failed")...)
		og, ok := obj.(interface{ SetObservedGeneration(int64) })
		switch p := obj.(type) {
		case *cloudv1alpha1.ProviderConfig:
			p.Status.SetObservedGeneration(p.Generation)
		case *cloudv1alpha1.ClusterProviderConfig:
			p.Status.SetObservedGeneration(p.Generation)
		default:
			if !ok {
				t.Fatalf("%T: no observedGeneration setter", obj)
			}
			og.SetObservedGeneration(obj.GetGeneration())
		}
	default:
		t.Fatalf("%T is neither a status.Object nor a crossplane-conditioned kind: kstatus cannot tell its state", obj)
	}
}

func TestEveryExampleKindIsKstatusCompliant(t *testing.T) {
	ctx := testenv.Context(t)
	// examples/ rendered with the pinned kustomize, as `make demo` applies it.
	objs := gotool.Objects(t, "kustomize", "build", "examples")
	kubectl, err := k8sbin.Path("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}

	// Namespaces first, then every edgeplane object.
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			if err := env.Client.Create(ctx, u.DeepCopy()); err != nil {
				t.Fatalf("creating namespace %s: %v", u.GetName(), err)
			}
		}
	}
	kinds := map[string]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if !strings.HasSuffix(gvk.Group, "edgeplane.io") {
			continue
		}
		kinds[gvk.Kind] = true
		t.Run(gvk.Kind+"/"+u.GetName(), func(t *testing.T) {
			typed, err := env.Scheme.New(gvk)
			if err != nil {
				t.Fatalf("the scheme does not know %s: %v", gvk, err)
			}
			obj := typed.(client.Object)
			if err := env.Scheme.Convert(u, obj, nil); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating the example: %v", err)
			}
			// A new object no controller has seen yet is in progress.
			expectStatus(ctx, t, obj, kstatus.InProgressStatus)
			for _, step := range []struct {
				state string
				want  kstatus.Status
			}{
				{"waiting", kstatus.InProgressStatus},
				{"ready", kstatus.CurrentStatus},
				{"failed", kstatus.FailedStatus},
			} {
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					t.Fatal(err)
				}
				setState(t, obj, step.state)
				if err := env.Client.Status().Update(ctx, obj); err != nil {
					t.Fatalf("writing the %s status: %v", step.state, err)
				}
				expectStatus(ctx, t, obj, step.want)
				if step.state == "ready" {
					expectKubectlWaitReady(t, kubectl, kubeconfig, obj)
				}
			}
		})
	}
	// Every in-cluster kind and both cloud configs have an example.
	for _, k := range []string{"ClusterProviderConfig", "ProviderConfig", "BurstPolicy", "ClusterBurstPolicy", "IngressDaemonSet", "FloatIPPool", "AnycastIPBinding", "PodElasticIP"} {
		if !kinds[k] {
			t.Errorf("examples/ has no %s: add one so its kstatus compliance is tested", k)
		}
	}
}

// expectStatus reads obj back as the API server serves it and checks kstatus.
func expectStatus(ctx context.Context, t *testing.T, obj client.Object, want kstatus.Status) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if gvk, err := env.Client.GroupVersionKindFor(obj); err == nil {
		u.SetGroupVersionKind(gvk)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		t.Fatal(err)
	}
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	if res.Status != want {
		st, _, _ := unstructured.NestedMap(u.Object, "status")
		t.Errorf("kstatus says %s (%s), want %s; generation %d, status %v", res.Status, res.Message, want, u.GetGeneration(), st)
	}
}

func expectKubectlWaitReady(t *testing.T, kubectl, kubeconfig string, obj client.Object) {
	t.Helper()
	gvk, err := env.Client.GroupVersionKindFor(obj)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", kubeconfig, "wait", "--for=condition=Ready", "--timeout=30s",
		fmt.Sprintf("%s.%s/%s", strings.ToLower(gvk.Kind), gvk.Group, obj.GetName())}
	if ns := obj.GetNamespace(); ns != "" {
		args = append(args, "-n", ns)
	}
	out, err := exec.Command(kubectl, args...).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
