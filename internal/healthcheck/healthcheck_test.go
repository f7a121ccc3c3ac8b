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

func TestHandler(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = appsv1.AddToScheme(scheme)
	cases := map[string]struct {
		objs     []client.Object
		path     string
		wantCode int
		wantBody string
	}{
		"ok healthy":       {objs: []client.Object{deployment(2, 2, "", 1, 1)}, path: "/ok", wantCode: 200, wantBody: "healthy: 2/2 replicas ready\n"},
		"healthz detached": {objs: []client.Object{deployment(2, 2, "Detaching", 1, 1)}, path: "/healthz", wantCode: 503, wantBody: "unhealthy: node is Detaching for an update\n"},
		"ok missing":       {path: "/ok", wantCode: 503, wantBody: "unhealthy: no Deployment for this node\n"},
		"livez":            {path: "/livez", wantCode: 200, wantBody: "ok\n"},
		"metrics":          {path: "/metrics", wantCode: 200},
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
