package healthcheck

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

func deployment(replicas, ready int32, phase string, gen, observed int64) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ing-w1", Namespace: "edge", Generation: gen, Labels: map[string]string{}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: observed, ReadyReplicas: ready, Replicas: replicas},
	}
	if phase != "" {
		d.Labels[appsv1alpha1.LabelPhase] = phase
	}
	return d
}

func TestEvaluate(t *testing.T) {
	cases := map[string]struct {
		d          *appsv1.Deployment
		wantOK     bool
		wantReason string
	}{
		"all ready":                      {d: deployment(2, 2, "", 3, 3), wantOK: true, wantReason: "2/2 replicas ready"},
		"phase Ready is ready":           {d: deployment(2, 2, "Ready", 3, 3), wantOK: true, wantReason: "2/2 replicas ready"},
		"missing":                        {d: nil, wantReason: "no Deployment for this node"},
		"one not ready":                  {d: deployment(2, 1, "", 3, 3), wantReason: "1/2 replicas ready"},
		"detaching":                      {d: deployment(2, 2, "Detaching", 3, 3), wantReason: "node is Detaching for an update"},
		"updating":                       {d: deployment(2, 2, "Updating", 4, 4), wantReason: "node is Updating for an update"},
		"reattaching":                    {d: deployment(2, 2, "Reattaching", 4, 4), wantReason: "node is Reattaching for an update"},
		"generation moved (annotations)": {d: deployment(2, 2, "", 4, 3), wantOK: true, wantReason: "2/2 replicas ready"},
		"scaled to zero":                 {d: deployment(0, 0, "", 1, 1), wantReason: "no replicas on this node"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ok, reason := Evaluate(tc.d)
			if ok != tc.wantOK || reason != tc.wantReason {
				t.Fatalf("Evaluate() = %v, %q; want %v, %q", ok, reason, tc.wantOK, tc.wantReason)
			}
		})
	}
}

// rolling gives d a rolling-update strategy with maxUnavailable mu, as the
// IngressDaemonSet controller writes maxUnavailablePodsPerNode.
func rolling(d *appsv1.Deployment, mu intstr.IntOrString) *appsv1.Deployment {
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &mu, MaxSurge: ptr.To(intstr.FromInt32(0))}}
	return d
}

// TestEvaluateScaleUp: a node that is not detached, has no update pending and
// serves with at least replicasPerNode − maxUnavailablePodsPerNode (at least
// 1) ready replicas is healthy, so raising replicasPerNode (every node has a
// replica starting) does not fail every node at once.
func TestEvaluateScaleUp(t *testing.T) {
	cases := map[string]struct {
		d          *appsv1.Deployment
		wantMin    int32
		wantOK     bool
		wantReason string
	}{
		"2 → 3 with maxUnavailable 1: 2 ready serve": {d: rolling(deployment(3, 2, "", 4, 4), intstr.FromInt32(1)),
			wantMin: 2, wantOK: true, wantReason: "2/3 replicas ready"},
		"2 → 3, status not yet observed": {d: rolling(deployment(3, 2, "", 5, 4), intstr.FromInt32(1)),
			wantMin: 2, wantOK: true, wantReason: "2/3 replicas ready"},
		"1 → 3 with maxUnavailable 1: 1 ready is too few": {d: rolling(deployment(3, 1, "", 4, 4), intstr.FromInt32(1)),
			wantMin: 2, wantReason: "1/3 replicas ready, at least 2 needed"},
		"detach mode default 100%: one ready replica serves": {d: rolling(deployment(3, 1, "", 4, 4), intstr.FromString("100%")),
			wantMin: 1, wantOK: true, wantReason: "1/3 replicas ready"},
		"100% but nothing ready": {d: rolling(deployment(3, 0, "", 4, 4), intstr.FromString("100%")),
			wantMin: 1, wantReason: "0/3 replicas ready, at least 1 needed"},
		"percentage rounds down: 50% of 3 is 1": {d: rolling(deployment(3, 1, "", 4, 4), intstr.FromString("50%")),
			wantMin: 2, wantReason: "1/3 replicas ready, at least 2 needed"},
		"maxUnavailable above replicas": {d: rolling(deployment(2, 1, "", 4, 4), intstr.FromInt32(5)),
			wantMin: 1, wantOK: true, wantReason: "1/2 replicas ready"},
		"maxUnavailable 0: every replica": {d: rolling(deployment(3, 2, "", 4, 4), intstr.FromInt32(0)),
			wantMin: 3, wantReason: "2/3 replicas ready"},
		"no strategy: every replica": {d: deployment(3, 2, "", 4, 4),
			wantMin: 3, wantReason: "2/3 replicas ready"},
		"Recreate: every replica": {d: func() *appsv1.Deployment {
			d := rolling(deployment(3, 2, "", 4, 4), intstr.FromInt32(1))
			d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
			return d
		}(), wantMin: 3, wantReason: "2/3 replicas ready"},
		"enough ready but detaching": {d: rolling(deployment(3, 2, "Detaching", 4, 4), intstr.FromInt32(1)),
			wantMin: 2, wantReason: "node is Detaching for an update"},
		"enough ready but updating": {d: rolling(deployment(3, 3, "Updating", 4, 4), intstr.FromInt32(1)),
			wantMin: 2, wantReason: "node is Updating for an update"},
		"enough ready but reattaching": {d: rolling(deployment(3, 2, "Reattaching", 4, 4), intstr.FromString("100%")),
			wantMin: 1, wantReason: "node is Reattaching for an update"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MinReady(tc.d); got != tc.wantMin {
				t.Errorf("MinReady() = %d, want %d", got, tc.wantMin)
			}
			ok, reason := Evaluate(tc.d)
			if ok != tc.wantOK || reason != tc.wantReason {
				t.Fatalf("Evaluate() = %v, %q; want %v, %q", ok, reason, tc.wantOK, tc.wantReason)
			}
		})
	}
}

func TestHandler(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = appsv1.AddToScheme(scheme)
	cases := map[string]struct {
		objs     []client.Object
		path     string
		wantCode int
		wantBody string
	}{
		"ok healthy":           {objs: []client.Object{deployment(2, 2, "", 1, 1)}, path: "/ok", wantCode: 200, wantBody: "healthy: 2/2 replicas ready\n"},
		"ok during a scale-up": {objs: []client.Object{rolling(deployment(3, 2, "", 1, 1), intstr.FromInt32(1))}, path: "/ok", wantCode: 200, wantBody: "healthy: 2/3 replicas ready\n"},
		"healthz detached":     {objs: []client.Object{deployment(2, 2, "Detaching", 1, 1)}, path: "/healthz", wantCode: 503, wantBody: "unhealthy: node is Detaching for an update\n"},
		"ok missing":           {path: "/ok", wantCode: 503, wantBody: "unhealthy: no Deployment for this node\n"},
		"livez":                {path: "/livez", wantCode: 200, wantBody: "ok\n"},
		"metrics":              {path: "/metrics", wantCode: 200},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).Build()
			srv := httptest.NewServer(Handler(&Checker{Reader: c, Namespace: "edge", Deployment: "ing-w1"}, nil, nil))
			defer srv.Close()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+tc.path, nil)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tc.wantCode, body)
			}
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Fatalf("body %q, want %q", body, tc.wantBody)
			}
			if strings.Count(strings.TrimSpace(string(body)), "\n") > 0 && tc.path != "/metrics" {
				t.Fatalf("reason is not one line: %q", body)
			}
		})
	}
}
