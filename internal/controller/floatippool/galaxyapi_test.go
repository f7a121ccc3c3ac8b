package floatippool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/metricsauth"
)

// api calls g as a caller allowed everything the API does.
func (f *fixture) api(g *GalaxyAPI, method, path, body string) (int, map[string]any) {
	f.t.Helper()
	return f.apiAs(g, galaxyAdminToken(f.t, f.ctx), method, path, body)
}

// apiAs calls g, as authenticated by Handler, with a bearer token.
func (f *fixture) apiAs(g *GalaxyAPI, token, method, path, body string) (int, map[string]any) {
	f.t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, strings.NewReader(body)).WithContext(f.ctx)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	g.Handler(logr.Discard()).ServeHTTP(rec, req)
	var out map[string]any
	if rec.Code == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		return rec.Code, nil
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		f.t.Fatalf("%s %s: %d %q: %v", method, path, rec.Code, rec.Body.String(), err)
	}
	return rec.Code, out
}

// galaxyAPI is the API over the test API server, asking it who callers are
// and what they may do.
func galaxyAPI(t *testing.T) *GalaxyAPI {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(env.Config)
	must(t, err)
	guard, err := metricsauth.NewGuardFor(env.Config, httpClient)
	must(t, err)
	return &GalaxyAPI{Client: env.Client, Pools: &PoolReconciler{Client: env.Client}, Guard: guard}
}

// serviceAccountToken creates a ServiceAccount and returns a token for it.
func serviceAccountToken(t *testing.T, ctx context.Context, namespace, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := env.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr := &authnv1.TokenRequest{}
	must(t, env.Client.SubResource("token").Create(ctx, sa, tr))
	return tr.Status.Token
}

// grant binds the ServiceAccount namespace/name to rules: cluster-wide
// with an empty where, else in the namespace where.
func grant(t *testing.T, ctx context.Context, namespace, name, where string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	roleName := "galaxy-" + namespace + "-" + name
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}
	if where == "" {
		must(t, env.Client.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: rules}))
		must(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}}))
		return
	}
	must(t, env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: roleName, Namespace: where}, Rules: rules}))
	must(t, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName, Namespace: where}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName}}))
}

var (
	adminTokenOnce sync.Once
	adminToken     string
)

// galaxyAdminToken is a token of a ServiceAccount allowed every verb on
// FloatIPs and FloatIPPools cluster-wide.
func galaxyAdminToken(t *testing.T, ctx context.Context) string {
	adminTokenOnce.Do(func() {
		must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "galaxy-callers"}}))
		grant(t, ctx, "galaxy-callers", "admin", "", rbacv1.PolicyRule{APIGroups: []string{networkingv1alpha1.GroupVersion.Group},
			Resources: []string{"floatips", "floatippools"}, Verbs: []string{"get", "list", "create", "update", "delete"}})
		adminToken = serviceAccountToken(t, ctx, "galaxy-callers", "admin")
	})
	return adminToken
}

// TestGalaxyAPI: galaxy's GET/POST /v1/ip and GET/POST/DELETE /v1/pool over
// the CRs, with galaxy's page shape and release rules.
func TestGalaxyAPI(t *testing.T) {
	f := newFixture(t, "api", []string{"10.0.7.1~10.0.7.20"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, f.ctx)
	g := galaxyAPI(t)
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

// TestGalaxyAPIAuthorisesEachRequest: the API answers only a caller with a
// token the API server accepts, and each request only as far as the
// caller's own permissions on FloatIPs (by the key's namespace) and
// FloatIPPools go, asked of the API server (TokenReview and
// SubjectAccessReview).
func TestGalaxyAPIAuthorisesEachRequest(t *testing.T) {
	a := newFixture(t, "galaxy-authz-a", []string{"10.0.41.1~10.0.41.10"}, networkingv1alpha1.ReleasePolicyDefault)
	b := newFixture(t, "galaxy-authz-b", []string{"10.0.42.1~10.0.42.10"}, networkingv1alpha1.ReleasePolicyDefault)
	ensureNodes(t, a.ctx)
	g := galaxyAPI(t)
	galaxyAdminToken(t, a.ctx) // the callers' namespace
	never := map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"}
	for _, p := range []struct {
		f    *fixture
		name string
	}{{a, "sts-0"}, {b, "sts-0"}, {a, "sts-1"}} {
		pod := p.f.pod(p.name, stsOwner("sts"), never)
		if msg := p.f.bind(pod, "n1"); msg != "" {
			t.Fatalf("bind %s in %s: %s", p.name, p.f.ns, msg)
		}
		p.f.deletePod(pod)
	}
	a.reconcileFIP("10.0.41.1")
	b.reconcileFIP("10.0.42.1")
	a.reconcileFIP("10.0.41.2")

	// A caller who may list and delete FloatIPs in namespace a only.
	grant(t, a.ctx, "galaxy-callers", "tenant-a", a.ns, rbacv1.PolicyRule{APIGroups: []string{networkingv1alpha1.GroupVersion.Group},
		Resources: []string{"floatips"}, Verbs: []string{"list", "delete"}})
	tenant := serviceAccountToken(t, a.ctx, "galaxy-callers", "tenant-a")
	// A caller who may delete one FloatIP of namespace a, by name.
	grant(t, a.ctx, "galaxy-callers", "one-ip", a.ns, rbacv1.PolicyRule{APIGroups: []string{networkingv1alpha1.GroupVersion.Group},
		Resources: []string{"floatips"}, ResourceNames: []string{"10-0-41-2"}, Verbs: []string{"delete"}})
	oneIP := serviceAccountToken(t, a.ctx, "galaxy-callers", "one-ip")
	// A caller who may create FloatIPPools, nothing else.
	grant(t, a.ctx, "galaxy-callers", "pool-creator", "", rbacv1.PolicyRule{APIGroups: []string{networkingv1alpha1.GroupVersion.Group},
		Resources: []string{"floatippools"}, Verbs: []string{"create"}})
	creator := serviceAccountToken(t, a.ctx, "galaxy-callers", "pool-creator")
	t.Cleanup(func() {
		var p networkingv1alpha1.FloatIPPool
		if env.Client.Get(a.ctx, client.ObjectKey{Name: "galaxy-authz-new"}, &p) == nil {
			p.Finalizers = nil
			_ = env.Client.Update(a.ctx, &p)
			_ = env.Client.Delete(a.ctx, &p)
		}
	})

	release := func(ns, ip string, pod ...string) string {
		name := "sts-0"
		if len(pod) > 0 {
			name = pod[0]
		}
		return `{"ips":[{"ip":"` + ip + `","appName":"sts","appType":"statefulset","podName":"` + name + `","namespace":"` + ns + `"}]}`
	}
	for _, tc := range []struct {
		name, token, method, path, body string
		want                            int
		total                           float64 // for a 200 listing
	}{
		{name: "no token", method: http.MethodGet, path: "/v1/ip?keyword=sts", want: http.StatusUnauthorized},
		{name: "a token the API server does not accept", token: "not-a-token", method: http.MethodDelete, path: "/v1/pool/" + b.pool.Name, want: http.StatusUnauthorized},
		{name: "list in the caller's namespace", token: tenant, method: http.MethodGet, path: "/v1/ip?appName=sts&namespace=" + a.ns, want: http.StatusOK, total: 2},
		{name: "list in another namespace", token: tenant, method: http.MethodGet, path: "/v1/ip?appName=sts&namespace=" + b.ns, want: http.StatusForbidden},
		{name: "search: only what the caller may list", token: tenant, method: http.MethodGet, path: "/v1/ip?keyword=sts-0", want: http.StatusOK, total: 1},
		{name: "search as a pool creator: nothing", token: creator, method: http.MethodGet, path: "/v1/ip?keyword=sts-0", want: http.StatusOK, total: 0},
		{name: "search as an admin: both", token: galaxyAdminToken(t, a.ctx), method: http.MethodGet, path: "/v1/ip?keyword=sts-0", want: http.StatusOK, total: 2},
		{name: "release another namespace's IP", token: tenant, method: http.MethodPost, path: "/v1/ip", body: release(b.ns, "10.0.42.1"), want: http.StatusForbidden},
		{name: "release with one IP not allowed: nothing released", token: tenant, method: http.MethodPost, path: "/v1/ip",
			body: `{"ips":[` + strings.TrimSuffix(strings.TrimPrefix(release(a.ns, "10.0.41.1"), `{"ips":[`), `]}`) + `,` + strings.TrimSuffix(strings.TrimPrefix(release(b.ns, "10.0.42.1"), `{"ips":[`), `]}`) + `]}`,
			want: http.StatusForbidden},
		{name: "read a pool", token: tenant, method: http.MethodGet, path: "/v1/pool/" + a.pool.Name, want: http.StatusForbidden},
		{name: "delete a pool", token: tenant, method: http.MethodDelete, path: "/v1/pool/" + b.pool.Name, want: http.StatusForbidden},
		{name: "create a pool without create", token: tenant, method: http.MethodPost, path: "/v1/pool", body: `{"name":"galaxy-authz-new","size":1}`, want: http.StatusForbidden},
		{name: "create a pool", token: creator, method: http.MethodPost, path: "/v1/pool", body: `{"name":"galaxy-authz-new","size":1}`, want: http.StatusOK},
		{name: "update a pool without update", token: creator, method: http.MethodPost, path: "/v1/pool", body: `{"name":"galaxy-authz-new","size":2}`, want: http.StatusForbidden},
		{name: "delete the pool without delete", token: creator, method: http.MethodDelete, path: "/v1/pool/galaxy-authz-new", want: http.StatusForbidden},
		{name: "release an IP the caller's role does not name", token: oneIP, method: http.MethodPost, path: "/v1/ip", body: release(a.ns, "10.0.41.1"), want: http.StatusForbidden},
		{name: "release the IP the caller's role names", token: oneIP, method: http.MethodPost, path: "/v1/ip", body: release(a.ns, "10.0.41.2", "sts-1"), want: http.StatusOK},
		{name: "release the caller's own namespace's IP", token: tenant, method: http.MethodPost, path: "/v1/ip", body: release(a.ns, "10.0.41.1"), want: http.StatusOK},
	} {
		code, out := a.apiAs(g, tc.token, tc.method, tc.path, tc.body)
		if code != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, code, out, tc.want)
			continue
		}
		if code == http.StatusOK && tc.method == http.MethodGet && out["totalElements"].(float64) != tc.total {
			t.Errorf("%s: %v items, want %v: %v", tc.name, out["totalElements"], tc.total, out)
		}
	}
	if _, held := b.fips()["10.0.42.1"]; !held {
		t.Errorf("namespace b's IP was released by a caller not allowed to")
	}
	for _, ip := range []string{"10.0.41.1", "10.0.41.2"} {
		if _, held := a.fips()[ip]; held {
			t.Errorf("namespace a's IP %s was not released by a caller allowed to", ip)
		}
	}
	for _, p := range []*networkingv1alpha1.FloatIPPool{a.pool, b.pool} {
		var got networkingv1alpha1.FloatIPPool
		must(t, env.Client.Get(a.ctx, client.ObjectKeyFromObject(p), &got))
		if got.DeletionTimestamp != nil {
			t.Errorf("pool %s is being deleted", p.Name)
		}
	}
	var created networkingv1alpha1.FloatIPPool
	must(t, env.Client.Get(a.ctx, client.ObjectKey{Name: "galaxy-authz-new"}, &created))
	if created.Spec.Size == nil || *created.Spec.Size != 1 {
		t.Errorf("the pool's size changed without update: %v", created.Spec.Size)
	}
}
