package plugin

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/plugin/release"
)

// TestRelease runs `release` through the entry point: it refuses without
// --keep-cloud, an unknown kind and a resource that is not being deleted;
// on a deleted one (held here by a finalizer, no manager running) it sets
// management policies without Delete and records the decision with the
// cloud object. The manager's part (removing the finalizer without a cloud
// call) is tested with the controller, in
// internal/controller/podelasticip TestCredentialsRejected.
func TestRelease(t *testing.T) {
	ctx := ctx(t)
	ns := "release-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	p := &networkingv1alpha1.PodElasticIP{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0", Finalizers: []string{"test.edgeplane.io/hold"}},
		Spec:       networkingv1alpha1.PodElasticIPSpec{PodName: "web-0"},
	}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)
		p.Finalizers = nil
		_ = env.Client.Update(ctx, p)
	})
	p.Status.AllocationID, p.Status.PublicIP = "eipalloc-0123456789abcdef0", "198.18.0.7"
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"without --keep-cloud": {[]string{"release", "podelasticip", "web-0", "-n", ns}, "pass --keep-cloud"},
		"unknown kind":         {[]string{"release", "floatip", "web-0", "-n", ns, "--keep-cloud"}, "unknown kind"},
		"not deleted":          {[]string{"release", "podelasticip", "web-0", "-n", ns, "--keep-cloud"}, "delete it first"},
		"no name":              {[]string{"release", "podelasticip", "--keep-cloud"}, "want KIND and NAME"},
	} {
		if r := run(t, "", tc.args...); r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", name, r.code, r.errOut, ExitUsage, tc.want)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil || len(p.Spec.ManagementPolicies) != 0 && p.Spec.ManagementPolicies[0] != "*" {
		t.Fatalf("a refused release changed the policies: %v %v", p.Spec.ManagementPolicies, err)
	}

	if err := env.Client.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "release", "PodElasticIPs", "web-0", "-n", ns, "--keep-cloud", "--reason", "account closed")
	if r.code != ExitOK || !strings.Contains(r.out, "eipalloc-0123456789abcdef0") {
		t.Fatalf("release: exit %d\nstdout %s\nstderr %s", r.code, r.out, r.errOut)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if got := p.Spec.ManagementPolicies; len(got) != len(release.KeepCloudPolicies) || got[0] != release.KeepCloudPolicies[0] {
		t.Errorf("managementPolicies = %v, want %v", got, release.KeepCloudPolicies)
	}
	note := p.Annotations[release.AnnotationKeptCloud]
	if !strings.Contains(note, "eipalloc-0123456789abcdef0") || !strings.Contains(note, "account closed") {
		t.Errorf("annotation %q lacks the kept address or the reason", note)
	}
}
