package floatippool

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
)

// plainPod creates a pod that asks for no float IP, with spec changed by edit.
func (f *fixture) plainPod(name string, edit func(*corev1.PodSpec)) *corev1.Pod {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if edit != nil {
		edit(&p.Spec)
	}
	must(f.t, env.Client.Create(f.ctx, p))
	return p
}

// taintedNode creates a node in the pools' node subnet carrying taint.
func taintedNode(t *testing.T, f *fixture, name, ip string, taint corev1.Taint) {
	t.Helper()
	n := readyNode(t, f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "b"}}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{taint}}})
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	must(t, env.Client.Status().Update(f.ctx, n))
	t.Cleanup(func() { _ = env.Client.Delete(f.ctx, n) })
}

// TestBindRefusesANodeThePodDoesNotAdmit: bind checks the pod's own node
// selector, required node affinity and tolerations against the node, for a
// float-IP pod and for a pod that wants none, so a caller of /v1/bind cannot
// place a pod where the scheduler never would.
func TestBindRefusesANodeThePodDoesNotAdmit(t *testing.T) {
	f := newFixture(t, "bind-admit", []string{"10.0.31.1~10.0.31.20"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	taintedNode(t, f, "bind-admit-tainted", "192.168.1.31", corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule})
	taintedNode(t, f, "bind-admit-evicting", "192.168.1.32", corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})

	zoneA := func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"zone": "a"} }
	affinityB := func(s *corev1.PodSpec) {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}}},
		}}}
	}
	tolerateDB := func(s *corev1.PodSpec) {
		s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule}}
	}
	floatIP := func(s *corev1.PodSpec) {
		s.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
			Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
		}
	}
	both := func(edits ...func(*corev1.PodSpec)) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			for _, e := range edits {
				e(s)
			}
		}
	}
	for _, tc := range []struct {
		name, node string
		spec       func(*corev1.PodSpec)
		wantErr    string // "" when the bind must succeed
	}{
		{"plain pod, node selector excludes the node", "n1", zoneA, "node selector or required node affinity"},
		{"float-IP pod, node selector excludes the node", "n1", both(floatIP, zoneA), "node selector or required node affinity"},
		{"plain pod, required affinity excludes the node", "n1", affinityB, "node selector or required node affinity"},
		{"plain pod, untolerated NoSchedule taint", "bind-admit-tainted", nil, "dedicated=db:NoSchedule"},
		{"float-IP pod, untolerated NoSchedule taint", "bind-admit-tainted", floatIP, "dedicated=db:NoSchedule"},
		{"plain pod, untolerated NoExecute taint", "bind-admit-evicting", tolerateDB, "maintenance:NoExecute"},
		{"plain pod, tolerated taint and matching affinity", "bind-admit-tainted", both(tolerateDB, affinityB), ""},
		{"float-IP pod, no constraints", "n1", floatIP, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := f.plainPod(strings.ToLower(strings.NewReplacer(" ", "-", ",", "", "=", "").Replace(tc.name)), tc.spec)
			msg := f.bind(pod, tc.node)
			var got corev1.Pod
			must(t, env.Client.Get(f.ctx, client.ObjectKeyFromObject(pod), &got))
			if tc.wantErr == "" {
				if msg != "" || got.Spec.NodeName != tc.node {
					t.Fatalf("bind = %q, pod on %q; want bound to %s", msg, got.Spec.NodeName, tc.node)
				}
				return
			}
			if !strings.Contains(msg, tc.wantErr) {
				t.Errorf("bind error %q, want one naming %q", msg, tc.wantErr)
			}
			if got.Spec.NodeName != "" {
				t.Errorf("pod bound to %s", got.Spec.NodeName)
			}
			for ip, fip := range f.fips() {
				if fip.Spec.Key != "" && strings.Contains(fip.Spec.Key, pod.Name) {
					t.Errorf("FloatIP %s allocated for the refused pod", ip)
				}
			}
		})
	}
}

// TestBindAllocatesForTheRealPodOnly: a filter request may carry any pod
// body; the bind that follows names the pod and allocates by what the
// cluster says of it, never by the body sent to the filter.
func TestBindAllocatesForTheRealPodOnly(t *testing.T) {
	f := newFixture(t, "bind-forged", []string{"10.0.32.1~10.0.32.20"}, networkingv1alpha1.ReleasePolicyDefault)
	nodes := ensureNodes(t, f.ctx)
	// The real pod asks for no float IP.
	real := f.plainPod("real", nil)
	// The forged body: the same pod (name, namespace, UID), asking for one.
	forged := real.DeepCopy()
	forged.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
		Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
	}
	if res := f.filter(forged, nodes); res.Error != "" {
		t.Fatalf("filter: %s", res.Error)
	}
	if msg := f.bind(real, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	if len(f.fips()) != 0 {
		t.Errorf("FloatIPs %v allocated for a pod that asks for none", f.fips())
	}
	if a := f.annotation(real); a != "" {
		t.Errorf("the pod got the args annotation %q", a)
	}
}

// countingBody counts the bytes read from an endless body.
type countingBody struct{ n int64 }

func (b *countingBody) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	b.n += int64(len(p))
	return len(p), nil
}

func (b *countingBody) Close() error { return nil }

// TestExtenderRefusesOversizeBodies: a filter or bind body beyond the cap is
// refused with 413 after reading at most the cap, whether it announces its
// length or not: a 60 MiB filter body once held about 617 MiB of heap.
func TestExtenderRefusesOversizeBodies(t *testing.T) {
	// As the extender's server wraps it.
	e := httpserve.Body(extenderLimits.MaxBodyBytes, &Extender{})
	if maxBody > 4<<20 || extenderLimits.MaxBodyBytes != maxBody {
		t.Fatalf("the extender's body cap is %d (server %d), want at most 4 MiB", maxBody, extenderLimits.MaxBodyBytes)
	}
	for _, path := range []string{"/v1/filter", "/v1/bind"} {
		for _, announced := range []int64{-1, 60 << 20} {
			body := &countingBody{}
			req := httptest.NewRequest(http.MethodPost, path, nil)
			req.Body, req.ContentLength = body, announced
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("%s, length %d: status %d, want 413", path, announced, rec.Code)
			}
			if body.n > maxBody+64<<10 {
				t.Errorf("%s, length %d: read %d bytes of the body, more than the cap of %d", path, announced, body.n, maxBody)
			}
		}
	}
	// A body within the cap is still read and decoded.
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/bind", strings.NewReader(`{}`)))
	var out wire.ExtenderBindingResult
	must(t, json.NewDecoder(io.LimitReader(rec.Body, 1<<20)).Decode(&out))
	if rec.Code != http.StatusOK || !strings.Contains(out.Error, "required") {
		t.Errorf("small bad body: %d %+v", rec.Code, out)
	}
}

// TestGalaxyAPIIsOffByDefault: the galaxy-ipam compatible API serves
// nothing unless its address is set.
func TestGalaxyAPIIsOffByDefault(t *testing.T) {
	if addr := DefaultOptions().APIAddress; addr != "" {
		t.Errorf("DefaultOptions().APIAddress = %q, want empty (off)", addr)
	}
}
