package providerconfig

import (
	"slices"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// The finalizers are spelled out: they are a contract with whoever reads a
// Secret or a usage held by them (and with the admission policy).
const (
	usageFinalizer = "cloud.edgeplane.io/usage"
	peipFinalizer  = "networking.edgeplane.io/finalizer"
)

// tenantSetup creates a namespace with an AWS credentials Secret named
// secrets[0] (and the others), and a ProviderConfig using secrets[0].
func tenantSetup(t *testing.T, ns string, secrets ...string) *cloudv1alpha1.ProviderConfig {
	t.Helper()
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for _, s := range secrets {
		mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s},
			Data: map[string][]byte{cloudv1alpha1.SecretKeyAWSAccessKeyID: []byte("AKIA"), cloudv1alpha1.SecretKeyAWSSecretAccessKey: []byte("s")}})
	}
	pc := &cloudv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "own", Namespace: ns},
		Spec: cloudv1alpha1.ProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1"},
			Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.LocalSecretReference{Name: secrets[0]}},
		},
	}
	mustCreate(t, pc)
	return pc
}

// peipUsing creates a PodElasticIP holding its finalizer (its address not
// released yet) and its usage of the config, as the PodElasticIP's
// connect records it.
func peipUsing(t *testing.T, ns, name, config string) (*networkingv1alpha1.PodElasticIP, *cloudv1alpha1.ProviderConfigUsage) {
	t.Helper()
	p := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: []string{peipFinalizer}}}
	p.Spec.PodName = name
	p.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: config}
	mustCreate(t, p)
	yes := true
	u := &cloudv1alpha1.ProviderConfigUsage{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: string(p.UID),
			Labels: map[string]string{xpv2.LabelKeyProviderKind: cloudv1alpha1.ProviderConfigKind, xpv2.LabelKeyProviderName: config},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: "PodElasticIP",
				Name: name, UID: p.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		TypedProviderConfigUsage: xpv2.TypedProviderConfigUsage{
			ProviderConfigReference: xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: config},
			ResourceReference:       xpv2.TypedReference{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: "PodElasticIP", Name: name},
		},
	}
	mustCreate(t, u)
	return p, u
}

// letGo removes a PodElasticIP's finalizer and deletes it, as its
// reconciler does once its address is released, and deletes its usage, as
// the garbage collector (not running here) does.
func letGo(t *testing.T, p *networkingv1alpha1.PodElasticIP) {
	t.Helper()
	ctx := testenv.Context(t)
	got := &networkingv1alpha1.PodElasticIP{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	got.Finalizers = nil
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, got); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	u := &cloudv1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: string(p.UID)}}
	if err := env.Client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func secretFinalizers(t *testing.T, ns, name string) []string {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(testenv.Context(t), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return s.Finalizers
}

// TestCredentialsSecretHeldWhileInUse: a ProviderConfig that a managed
// resource uses holds its credentials Secret with its own finalizer, and
// records it; deleting the Secret (as a namespace's deletion does, first
// if it likes) leaves it readable until the last user has let go, then the
// Secret goes. A config without users holds nothing.
func TestCredentialsSecretHeldWhileInUse(t *testing.T) {
	ctx := testenv.Context(t)
	const ns = "protect-creds"
	const fin = "providerconfig.cloud.edgeplane.io/own"
	r, rec := newReconciler(func() config { return &cloudv1alpha1.ProviderConfig{} })
	pc := tenantSetup(t, ns, "aws")
	key := client.ObjectKeyFromObject(pc)

	reconcileOnce(t, r, key)
	if f := secretFinalizers(t, ns, "aws"); len(f) != 0 {
		t.Fatalf("a config nobody uses holds its Secret: finalizers %v", f)
	}

	peip, _ := peipUsing(t, ns, "app-0", pc.Name)
	reconcileOnce(t, r, key)
	if f := secretFinalizers(t, ns, "aws"); !slices.Equal(f, []string{fin}) {
		t.Fatalf("Secret finalizers %v while the config is in use, want [%s]", f, fin)
	}
	got := &cloudv1alpha1.ProviderConfig{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if want := []cloudv1alpha1.SecretReference{{Namespace: ns, Name: "aws"}}; !slices.Equal(got.Status.ProtectedSecrets, want) {
		t.Errorf("status.protectedSecrets %v, want %v", got.Status.ProtectedSecrets, want)
	}
	if evs := strings.Join(drainEvents(rec), "\n"); !strings.Contains(evs, "Normal "+reasonCredentialsProtected) {
		t.Errorf("events %q, want a Normal %s", evs, reasonCredentialsProtected)
	}

	// The Secret is deleted while in use: it stays, readable.
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}}); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, key)
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "aws"}, s); err != nil || s.DeletionTimestamp == nil {
		t.Fatalf("the deleted Secret in use: %v, deletionTimestamp %v; want it kept, terminating", err, s.DeletionTimestamp)
	}
	if c := getPC(t, key).GetCondition(xpv2.TypeReady); c.Reason != cloudv1alpha1.ReasonCredentialsAvailable {
		t.Errorf("Ready reason %s while the held Secret terminates, want %s", c.Reason, cloudv1alpha1.ReasonCredentialsAvailable)
	}

	// The last user lets go (its usage goes with it): so does the config.
	letGo(t, peip)
	reconcileOnce(t, r, key)
	if f := secretFinalizers(t, ns, "aws"); len(f) != 0 {
		t.Fatalf("Secret finalizers %v after the last user went, want none", f)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "aws"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted Secret is still there once unused: %v", err)
	}
	if p := getPC(t, key); len(p.Status.ProtectedSecrets) != 0 {
		t.Errorf("status.protectedSecrets %v once unused, want none", p.Status.ProtectedSecrets)
	}
}

// TestCredentialsSecretChangedWhileInUse: a config in use that is pointed
// at another Secret holds the new one and lets the old one go.
func TestCredentialsSecretChangedWhileInUse(t *testing.T) {
	ctx := testenv.Context(t)
	const ns = "protect-rotate"
	const fin = "providerconfig.cloud.edgeplane.io/own"
	r, _ := newReconciler(func() config { return &cloudv1alpha1.ProviderConfig{} })
	pc := tenantSetup(t, ns, "old", "new")
	key := client.ObjectKeyFromObject(pc)
	peipUsing(t, ns, "app-0", pc.Name)
	reconcileOnce(t, r, key)
	if f := secretFinalizers(t, ns, "old"); !slices.Equal(f, []string{fin}) {
		t.Fatalf("old Secret finalizers %v, want [%s]", f, fin)
	}

	got := getPC(t, key)
	got.Spec.Credentials.SecretRef.Name = "new"
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, key)
	reconcileOnce(t, r, key)
	if f := secretFinalizers(t, ns, "new"); !slices.Equal(f, []string{fin}) {
		t.Errorf("new Secret finalizers %v, want [%s]", f, fin)
	}
	if f := secretFinalizers(t, ns, "old"); len(f) != 0 {
		t.Errorf("old Secret finalizers %v after the config moved on, want none", f)
	}
	if want := []cloudv1alpha1.SecretReference{{Namespace: ns, Name: "new"}}; !slices.Equal(getPC(t, key).Status.ProtectedSecrets, want) {
		t.Errorf("status.protectedSecrets %v, want %v", getPC(t, key).Status.ProtectedSecrets, want)
	}
}

// TestUsageHeldUntilItsResourceLetsGo: usages hold the config while their
// managed resource still exists, even once they are deleted themselves (the
// namespace controller deletes them with everything else): the config's
// deletion waits, and its Secret stays held. A usage made before usages
// were held gets the finalizer. Once the resource is gone its usage is let
// go, and then the Secret and the config.
func TestUsageHeldUntilItsResourceLetsGo(t *testing.T) {
	ctx := testenv.Context(t)
	const ns = "protect-usage"
	const fin = "providerconfig.cloud.edgeplane.io/own"
	r, _ := newReconciler(func() config { return &cloudv1alpha1.ProviderConfig{} })
	pc := tenantSetup(t, ns, "aws")
	key := client.ObjectKeyFromObject(pc)
	peip, u := peipUsing(t, ns, "app-0", pc.Name)
	reconcileOnce(t, r, key)
	stored := &cloudv1alpha1.ProviderConfigUsage{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), stored); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(stored.Finalizers, usageFinalizer) {
		t.Fatalf("usage finalizers %v, want %s", stored.Finalizers, usageFinalizer)
	}

	// The namespace's deletion, in its order: usages, the config, the
	// PodElasticIP (held by its finalizer), the Secret.
	for _, o := range []client.Object{stored, getPC(t, key), peip, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}}} {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	res := reconcileOnce(t, r, key)
	if res.RequeueAfter == 0 {
		t.Errorf("a config whose users are all being deleted is not looked at again (%+v)", res)
	}
	got := getPC(t, key)
	if got.Status.Users != 1 || got.GetCondition(cloudv1alpha1.TypeTerminating).Reason != cloudv1alpha1.ReasonInUse {
		t.Fatalf("config users %d, Terminating %+v: want 1 user and InUse while the PodElasticIP still exists",
			got.Status.Users, got.GetCondition(cloudv1alpha1.TypeTerminating))
	}
	if f := secretFinalizers(t, ns, "aws"); !slices.Equal(f, []string{fin}) {
		t.Fatalf("Secret finalizers %v while a resource finishes, want [%s]", f, fin)
	}

	// The PodElasticIP releases its address and goes; its usage is let go
	// (here by the config's reconciler: nobody else released it).
	letGo(t, peip)
	reconcileOnce(t, r, key)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), &cloudv1alpha1.ProviderConfigUsage{}); !apierrors.IsNotFound(err) {
		t.Errorf("the usage of a PodElasticIP that is gone is still there: %v", err)
	}
	for _, o := range []client.Object{&corev1.Secret{}, &cloudv1alpha1.ProviderConfig{}} {
		k := key
		if _, ok := o.(*corev1.Secret); ok {
			k.Name = "aws"
		}
		if err := env.Client.Get(ctx, k, o); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s still there once unused: %v", o, k, err)
		}
	}
}

// TestUsageOfResourceWithOnlyGCFinalizers: a resource being deleted in the
// foreground holds the garbage collector's finalizer until its usage is
// gone; once it holds nothing else, it has let go and its usage goes.
func TestUsageOfResourceWithOnlyGCFinalizers(t *testing.T) {
	ctx := testenv.Context(t)
	const ns = "protect-foreground"
	r, _ := newReconciler(func() config { return &cloudv1alpha1.ProviderConfig{} })
	pc := tenantSetup(t, ns, "aws")
	key := client.ObjectKeyFromObject(pc)
	peip, u := peipUsing(t, ns, "app-0", pc.Name)
	reconcileOnce(t, r, key)
	if err := env.Client.Delete(ctx, peip, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	// The garbage collector (not running here) would delete the usage.
	if err := env.Client.Delete(ctx, u); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, key)
	if getPC(t, key).Status.Users != 1 {
		t.Fatalf("users %d while the PodElasticIP still holds its own finalizer, want 1", getPC(t, key).Status.Users)
	}
	got := &networkingv1alpha1.PodElasticIP{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(peip), got); err != nil {
		t.Fatal(err)
	}
	got.Finalizers = slices.DeleteFunc(got.Finalizers, func(f string) bool { return f == peipFinalizer })
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r, key)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), &cloudv1alpha1.ProviderConfigUsage{}); !apierrors.IsNotFound(err) {
		t.Errorf("the usage of a PodElasticIP holding only %v is still there: %v", got.Finalizers, err)
	}
}

func TestCredentialsFinalizerName(t *testing.T) {
	long := strings.Repeat("a", 70) + ".b-c"
	cases := map[string]struct{ kind, name, want string }{
		"provider config":         {cloudv1alpha1.ProviderConfigKind, "own", "providerconfig.cloud.edgeplane.io/own"},
		"cluster provider config": {cloudv1alpha1.ClusterProviderConfigKind, "default", "clusterproviderconfig.cloud.edgeplane.io/default"},
	}
	for name, tc := range cases {
		if got := CredentialsFinalizer(tc.kind, tc.name); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	a, b := CredentialsFinalizer(cloudv1alpha1.ProviderConfigKind, long), CredentialsFinalizer(cloudv1alpha1.ProviderConfigKind, long+"x")
	if a == b {
		t.Errorf("two long names share the finalizer %q", a)
	}
	for _, f := range []string{a, b} {
		if errs := validation.IsQualifiedName(f); len(errs) > 0 {
			t.Errorf("%q is not a valid finalizer: %v", f, errs)
		}
	}
}

func getPC(t *testing.T, key client.ObjectKey) *cloudv1alpha1.ProviderConfig {
	t.Helper()
	got := &cloudv1alpha1.ProviderConfig{}
	if err := env.Client.Get(testenv.Context(t), key, got); err != nil {
		t.Fatal(err)
	}
	return got
}
