package floatippool

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func (f *fixture) api(g *GalaxyAPI, method, path, body string) (int, map[string]any) {
	f.t.Helper()
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)).WithContext(f.ctx))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		f.t.Fatalf("%s %s: %d %q: %v", method, path, rec.Code, rec.Body.String(), err)
	}
	return rec.Code, out
}

// TestGalaxyAPI: galaxy's GET/POST /v1/ip and GET/POST/DELETE /v1/pool over
// the CRs, with galaxy's page shape and release rules.
func TestGalaxyAPI(t *testing.T) {
	f := newFixture(t, "api", []string{"10.0.7.1~10.0.7.20"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	g := &GalaxyAPI{Client: env.Client, Pools: &PoolReconciler{Client: env.Client}}
	// Pools made through the API are cluster-wide sharing groups: they draw
	// from pools without a namespace selector.
	must(t, env.Client.Get(f.ctx, client.ObjectKeyFromObject(f.pool), f.pool))
	f.pool.Spec.NamespaceSelector = nil
	must(t, env.Client.Update(f.ctx, f.pool))

	// Two StatefulSet pods with never; one is deleted and its IP kept.
	never := map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"}
	p0 := f.pod("sts-0", stsOwner("sts"), never)
	p1 := f.pod("sts-1", stsOwner("sts"), never)
	for _, p := range []string{"sts-0", "sts-1"} {
		pod := p0
		if p == "sts-1" {
			pod = p1
		}
		if msg := f.bind(pod, "n1"); msg != "" {
			t.Fatalf("bind %s: %s", p, msg)
		}
	}
	f.deletePod(p1)
	f.reconcileFIP("10.0.7.2")

	code, page := f.api(g, http.MethodGet, "/v1/ip?appName=sts&appType=statefulsets&namespace=api&sort=ip%20desc", "")
	if code != http.StatusOK || page["totalElements"].(float64) != 2 || page["first"] != true || page["last"] != true || page["size"].(float64) != 10 {
		t.Fatalf("GET /v1/ip = %d %v", code, page)
	}
	content := page["content"].([]any)
	first, second := content[0].(map[string]any), content[1].(map[string]any)
	if first["ip"] != "10.0.7.2" || first["status"] != "Deleted" || first["releasable"] != true || first["policy"].(float64) != 2 || first["appType"] != "statefulset" || first["podName"] != "sts-1" {
		t.Fatalf("first item = %v", first)
	}
	if second["ip"] != "10.0.7.1" || second["status"] != "Pending" || second["releasable"] != nil {
		t.Fatalf("second item = %v", second)
	}
	// Keyword search and paging.
	if _, page := f.api(g, http.MethodGet, "/v1/ip?keyword=sts-1", ""); page["totalElements"].(float64) != 1 {
		t.Fatalf("keyword search = %v", page)
	}
	if _, page := f.api(g, http.MethodGet, "/v1/ip?appName=sts&namespace=api&size=1&page=1", ""); page["number"].(float64) != 1 || page["numberOfElements"].(float64) != 1 || page["totalPages"].(float64) != 2 || page["last"] != true {
		t.Fatalf("page 1 = %v", page)
	}

	// Release: the running pod's IP is refused, the deleted pod's is freed.
	code, out := f.api(g, http.MethodPost, "/v1/ip", `{"ips":[{"ip":"10.0.7.1","appName":"sts","appType":"statefulset","podName":"sts-0","namespace":"api"}]}`)
	if code != http.StatusBadRequest || !strings.Contains(out["message"].(string), "not releasable") {
		t.Fatalf("release running = %d %v", code, out)
	}
	code, out = f.api(g, http.MethodPost, "/v1/ip", `{"ips":[{"ip":"10.0.7.2","appName":"sts","appType":"statefulset","podName":"sts-1","namespace":"api"}]}`)
	if code != http.StatusOK || out["code"].(float64) != 200 {
		t.Fatalf("release = %d %v", code, out)
	}
	if _, ok := f.fips()["10.0.7.2"]; ok {
		t.Fatalf("10.0.7.2 not released")
	}
	code, out = f.api(g, http.MethodPost, "/v1/ip", `{"ips":[{"ip":"10.0.7.2","appName":"sts","podName":"sts-1","namespace":"api"}]}`)
	if code != http.StatusAccepted || len(out["unreleased"].([]any)) != 1 {
		t.Fatalf("release twice = %d %v", code, out)
	}
	if code, _ := f.api(g, http.MethodPost, "/v1/ip", `{"ips":[{"ip":"10.0.7"}]}`); code != http.StatusBadRequest {
		t.Fatalf("bad ip = %d", code)
	}

	// Pools: create with pre-allocation, read back, too big, delete.
	code, out = f.api(g, http.MethodPost, "/v1/pool", `{"name":"api-pool","size":3,"preAllocateIP":true}`)
	if code != http.StatusOK || out["realPoolSize"].(float64) != 3 {
		t.Fatalf("POST /v1/pool = %d %v", code, out)
	}
	t.Cleanup(func() {
		var p networkingv1alpha1.FloatIPPool
		if env.Client.Get(f.ctx, client.ObjectKey{Name: "api-pool"}, &p) == nil {
			p.Finalizers = nil
			_ = env.Client.Update(f.ctx, &p)
			_ = env.Client.Delete(f.ctx, &p)
		}
	})
	code, out = f.api(g, http.MethodGet, "/v1/pool/api-pool", "")
	pool, _ := out["pool"].(map[string]any)
	if code != http.StatusOK || pool["size"].(float64) != 3 || pool["preAllocateIP"] != true || pool["name"] != "api-pool" {
		t.Fatalf("GET /v1/pool = %d %v", code, out)
	}
	if _, page := f.api(g, http.MethodGet, "/v1/ip?poolName=api-pool", ""); page["totalElements"].(float64) != 3 {
		t.Fatalf("pool IPs = %v", page)
	}
	code, out = f.api(g, http.MethodPost, "/v1/pool", `{"name":"api-pool","size":100,"preAllocateIP":true}`)
	if code != http.StatusAccepted || out["message"] != "No enough IPs" || out["realPoolSize"].(float64) >= 100 {
		t.Fatalf("oversized pool = %d %v", code, out)
	}
	if code, _ := f.api(g, http.MethodGet, "/v1/pool/missing", ""); code != http.StatusNotFound {
		t.Fatalf("GET missing pool = %d", code)
	}
	if code, _ := f.api(g, http.MethodDelete, "/v1/pool/api-pool", ""); code != http.StatusOK {
		t.Fatalf("DELETE = %d", code)
	}
	var p networkingv1alpha1.FloatIPPool
	if err := env.Client.Get(f.ctx, client.ObjectKey{Name: "api-pool"}, &p); err == nil && p.DeletionTimestamp == nil {
		t.Fatalf("pool not being deleted")
	}
}
