package metricsauth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// TestFilterAgainstTheAPIServer asks a real API server: a service account
// bound to a role that may GET /metrics is served, one without is refused,
// a made-up token is not authenticated.
func TestFilterAgainstTheAPIServer(t *testing.T) {
	ctx := testenv.Context(t)
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "metricsauth-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}}
		if err := c.Create(ctx, sa); err != nil {
			t.Fatal(err)
		}
		tr := &authnv1.TokenRequest{}
		if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
			t.Fatalf("requesting a token for %s: %v", name, err)
		}
		return tr.Status.Token
	}
	scraper, other := token("scraper"), token("other")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: ns.Name}}}
	if err := c.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(ctx, binding)
		_ = c.Delete(ctx, role)
	})

	httpClient, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := Filter(env.Config, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"bound to a role that may GET /metrics", scraper, http.StatusOK},
		{"no such role", other, http.StatusForbidden},
		{"made-up token", "not-a-token", http.StatusUnauthorized},
		{"no token", "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/metrics", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
