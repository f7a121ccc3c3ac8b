package admissionpolicy_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/gotool"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

const (
	release   = "edgeplane"
	managerNS = "edgeplane-system"
	tenantNS  = "tenant-creds"
	// configFinalizer is the finalizer a ProviderConfig named own puts on
	// its credentials Secret while in use (providerconfig.CredentialsFinalizer).
	configFinalizer = "providerconfig.cloud.edgeplane.io/own"
)

// TestManagerMayOnlyHoldCredentialsSecrets: the chart's credentials RBAC
// lets the manager patch Secrets in the credentials namespaces, and its
// ValidatingAdmissionPolicy lets those patches add or remove a provider
// config's finalizer and nothing else. The manager still writes its own
// certificate Secrets (the webhook's and the float-IP servers' two), and
// nobody else is constrained.
func TestManagerMayOnlyHoldCredentialsSecrets(t *testing.T) {
	// The chart's credentials grant (a ClusterRole bound in each credentials
	// namespace) and its policy, as rendered before the test's time budget
	// starts.
	rendered := gotool.Objects(t, "helm", "template", release, "charts/edgeplane", "--namespace", managerNS,
		"--show-only", "templates/rbac.yaml", "--show-only", "templates/credentials-policy.yaml",
		"--set", "credentialNamespaces={"+tenantNS+"}")
	ctx := testenv.Context(t)
	for _, ns := range []string{managerNS, tenantNS} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	var policies int
	for _, o := range rendered {
		switch {
		case strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy"):
			policies++
		case strings.HasSuffix(o.GetName(), "-credentials-reader"):
		default:
			continue
		}
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if policies != 2 {
		t.Fatalf("the chart rendered %d policy objects, want the policy and its binding", policies)
	}
	// The certificate Secrets are written under the chart's
	// manager-namespace Role; here a Role for those Secrets alone stands in.
	// "other" is a Secret the Role also grants but the policy does not
	// except.
	certs := []string{release + "-webhook-cert", release + "-floatip-server-cert", release + "-floatip-scheduler-client"}
	other := release + "-other"
	mustCreate(t, ctx,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: "cert"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: append([]string{other}, certs...), Verbs: []string{"get", "update", "patch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: "cert"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cert"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: managerNS, Name: release}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "aws", Labels: map[string]string{"team": "a"}},
			Data: map[string][]byte{"aws_access_key_id": []byte("AKIA"), "aws_secret_access_key": []byte("s")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: other}, Data: map[string][]byte{"tls.crt": []byte("old")}},
	)
	for _, cert := range certs {
		mustCreate(t, ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: managerNS, Name: cert}, Data: map[string][]byte{"tls.crt": []byte("old")}})
	}

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + managerNS + ":" + release}
	manager, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	tenantSecret := client.ObjectKey{Namespace: tenantNS, Name: "aws"}
	// A new policy takes the API server a moment to load. Each probe
	// writes a new value: a write that changes nothing is no change to
	// refuse.
	probe := 0
	eventually.That(ctx, t, "the policy refusing the manager's change of a Secret's data", func() (bool, string) {
		probe++
		err := patch(ctx, manager, tenantSecret, func(s *corev1.Secret) { s.Data["probe"] = []byte(strconv.Itoa(probe)) })
		return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"), errString(err)
	})

	type secretCase struct {
		name   string
		as     client.Client
		secret client.ObjectKey
		change func(*corev1.Secret)
		allow  bool
	}
	cases := []secretCase{
		{"hold: add the config's finalizer", manager, tenantSecret, func(s *corev1.Secret) { s.Finalizers = append(s.Finalizers, configFinalizer) }, true},
		{"let go: remove it", manager, tenantSecret, func(s *corev1.Secret) { s.Finalizers = nil }, true},
		{"a cluster config's finalizer", manager, tenantSecret, func(s *corev1.Secret) {
			s.Finalizers = append(s.Finalizers, "clusterproviderconfig.cloud.edgeplane.io/default")
		}, true},
		{"another finalizer", manager, tenantSecret, func(s *corev1.Secret) { s.Finalizers = append(s.Finalizers, "example.com/keep") }, false},
		{"a finalizer of the same domain, not a config's", manager, tenantSecret, func(s *corev1.Secret) { s.Finalizers = append(s.Finalizers, "cloud.edgeplane.io/in-use") }, false},
		{"data", manager, tenantSecret, func(s *corev1.Secret) { s.Data["aws_access_key_id"] = []byte("AKIAOTHER") }, false},
		{"a new key", manager, tenantSecret, func(s *corev1.Secret) { s.Data["token"] = []byte("t") }, false},
		{"a label", manager, tenantSecret, func(s *corev1.Secret) { s.Labels["team"] = "b" }, false},
		{"an annotation", manager, tenantSecret, func(s *corev1.Secret) { s.Annotations = map[string]string{"a": "b"} }, false},
		{"immutability", manager, tenantSecret, func(s *corev1.Secret) { yes := true; s.Immutable = &yes }, false},
		{"an owner", manager, tenantSecret, func(s *corev1.Secret) {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"}}
		}, false},
		{"another Secret of the manager's namespace", manager, client.ObjectKey{Namespace: managerNS, Name: other}, func(s *corev1.Secret) { s.Data["tls.crt"] = []byte("new") }, false},
		{"anybody else's change", env.Client, tenantSecret, func(s *corev1.Secret) { s.Data["token"] = []byte("t") }, true},
	}
	for _, cert := range certs {
		cases = append(cases, secretCase{"its own certificate " + cert, manager, client.ObjectKey{Namespace: managerNS, Name: cert}, func(s *corev1.Secret) { s.Data["tls.crt"] = []byte("new") }, true})
	}
	for _, tc := range cases {
		err := patch(ctx, tc.as, tc.secret, tc.change)
		switch {
		case tc.allow && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case !tc.allow && err == nil:
			t.Errorf("%s: allowed, want the policy to refuse it", tc.name)
		case !tc.allow && !strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
			t.Errorf("%s: refused for another reason than the policy: %v", tc.name, err)
		}
	}
}

// patch reads the Secret and merge-patches it with change, as the manager
// does (an optimistic lock on what it read).
func patch(ctx context.Context, c client.Client, key client.ObjectKey, change func(*corev1.Secret)) error {
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, key, s); err != nil {
		return err
	}
	before := s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	change(s)
	return c.Patch(ctx, s, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

func errString(err error) string {
	if err == nil {
		return "allowed"
	}
	return err.Error()
}

func mustCreate(t *testing.T, ctx context.Context, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}
