package providerconfig

import (
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/tenancy"
	"github.com/edgeplane/edgeplane/internal/tenancy/tenancytest"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func newReconciler(newConfig func() config) (*Reconciler, *events.FakeRecorder) {
	rec := events.NewFakeRecorder(20)
	return &Reconciler{client: env.Client, reader: env.Client, recorder: rec, newConfig: newConfig}, rec
}

// usage records that a (pretend) managed resource uses the config.
func usage(name, namespace, kind, config string, controlled bool) client.Object {
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{xpv2.LabelKeyProviderKind: kind, xpv2.LabelKeyProviderName: config}}
	if controlled {
		yes := true
		meta.OwnerReferences = []metav1.OwnerReference{{APIVersion: "networking.edgeplane.io/v1alpha1", Kind: "Example",
			Name: name, UID: types.UID("uid-" + name), Controller: &yes}}
	}
	ref := xpv2.TypedProviderConfigUsage{
		ProviderConfigReference: xpv2.ProviderConfigReference{Kind: kind, Name: config},
		ResourceReference:       xpv2.TypedReference{APIVersion: "networking.edgeplane.io/v1alpha1", Kind: "Example", Name: name},
	}
	if namespace == "" {
		return &cloudv1alpha1.ClusterProviderConfigUsage{ObjectMeta: meta, TypedProviderConfigUsage: ref}
	}
	return &cloudv1alpha1.ProviderConfigUsage{ObjectMeta: meta, TypedProviderConfigUsage: ref}
}

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(testenv.Context(t), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func reconcileOnce(t *testing.T, r *Reconciler, key client.ObjectKey) reconcile.Result {
	t.Helper()
	res, err := r.Reconcile(testenv.Context(t), reconcile.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("reconciling %s: %v", key, err)
	}
	return res
}

func drainEvents(rec *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-rec.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func TestClusterProviderConfigLifecycle(t *testing.T) {
	ctx := testenv.Context(t)
	r, rec := newReconciler(func() config { return &cloudv1alpha1.ClusterProviderConfig{} })
	cpc := &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "lifecycle"},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1"},
			Credentials: cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.SecretReference{Namespace: "default", Name: "lifecycle-creds"}},
		},
	}
	mustCreate(t, cpc)
	key := client.ObjectKeyFromObject(cpc)
	get := func() *cloudv1alpha1.ClusterProviderConfig {
		t.Helper()
		got := &cloudv1alpha1.ClusterProviderConfig{}
		if err := env.Client.Get(ctx, key, got); err != nil {
			t.Fatalf("getting the config: %v", err)
		}
		return got
	}

	// The Secret does not exist yet.
	if res := reconcileOnce(t, r, key); res.RequeueAfter != recheckInterval {
		t.Errorf("RequeueAfter = %s, want the credentials re-check interval %s", res.RequeueAfter, recheckInterval)
	}
	got := get()
	if c := got.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || c.Reason != cloudv1alpha1.ReasonSecretNotFound {
		t.Fatalf("Ready = %s/%s, want False/%s", c.Status, c.Reason, cloudv1alpha1.ReasonSecretNotFound)
	}
	if got.Status.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration = %d, want %d", got.Status.ObservedGeneration, got.Generation)
	}
	if !strings.Contains(strings.Join(got.Finalizers, ","), cloudv1alpha1.InUseFinalizer) {
		t.Errorf("finalizers = %v, want %s", got.Finalizers, cloudv1alpha1.InUseFinalizer)
	}
	if evs := drainEvents(rec); len(evs) != 1 || !strings.Contains(evs[0], "Warning CredentialsNotReady") {
		t.Errorf("events = %q, want one Warning CredentialsNotReady", evs)
	}

	// A second pass with nothing new writes nothing and says nothing.
	rv := got.ResourceVersion
	reconcileOnce(t, r, key)
	if got := get(); got.ResourceVersion != rv {
		t.Errorf("an idle reconcile wrote the config (resourceVersion %s -> %s)", rv, got.ResourceVersion)
	}
	if evs := drainEvents(rec); len(evs) != 0 {
		t.Errorf("an idle reconcile emitted events: %q", evs)
	}

	// The Secret appears with the right keys.
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lifecycle-creds"},
		Data: map[string][]byte{"aws_access_key_id": []byte("AKIA"), "aws_secret_access_key": []byte("s3cr3t")}})
	reconcileOnce(t, r, key)
	if c := get().GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue || c.Reason != cloudv1alpha1.ReasonCredentialsAvailable {
		t.Fatalf("Ready = %s/%s, want True/%s", c.Status, c.Reason, cloudv1alpha1.ReasonCredentialsAvailable)
	}
	if c := get().GetCondition(xpv2.TypeReady); strings.Contains(c.Message, "s3cr3t") {
		t.Fatalf("the Ready message leaks the secret: %q", c.Message)
	}

	// Users: a namespaced and a cluster-scoped managed resource, plus a stale
	// usage without a controller and one of another config.
	mustCreate(t,
		usage("peip-a", "default", cloudv1alpha1.ClusterProviderConfigKind, "lifecycle", true),
		usage("aipb-b", "", cloudv1alpha1.ClusterProviderConfigKind, "lifecycle", true),
		usage("stale-c", "default", cloudv1alpha1.ClusterProviderConfigKind, "lifecycle", false),
		usage("other-d", "default", cloudv1alpha1.ClusterProviderConfigKind, "other", true),
	)
	reconcileOnce(t, r, key)
	if got := get(); got.Status.Users != 2 {
		t.Fatalf("users = %d, want 2", got.Status.Users)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "stale-c"}, &cloudv1alpha1.ProviderConfigUsage{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stale usage was not deleted: %v", err)
	}

	// Deleting the config while it is used keeps it, says why, and warns once.
	if err := env.Client.Delete(ctx, get()); err != nil {
		t.Fatalf("deleting the config: %v", err)
	}
	drainEvents(rec)
	reconcileOnce(t, r, key)
	reconcileOnce(t, r, key)
	got = get()
	if c := got.GetCondition(cloudv1alpha1.TypeTerminating); c.Status != corev1.ConditionTrue || c.Reason != cloudv1alpha1.ReasonInUse {
		t.Fatalf("Terminating = %s/%s, want True/%s", c.Status, c.Reason, cloudv1alpha1.ReasonInUse)
	}
	if evs := drainEvents(rec); len(evs) != 1 || !strings.Contains(evs[0], "Warning InUse") {
		t.Errorf("events = %q, want exactly one Warning InUse", evs)
	}

	// Once the last user goes, the config goes.
	for _, u := range []client.Object{usage("peip-a", "default", "", "", false), usage("aipb-b", "", "", "", false)} {
		if err := env.Client.Delete(ctx, u); err != nil {
			t.Fatalf("deleting usage %s: %v", u.GetName(), err)
		}
	}
	reconcileOnce(t, r, key)
	if err := env.Client.Get(ctx, key, &cloudv1alpha1.ClusterProviderConfig{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the unused config was not released: %v", err)
	}
}

func TestProviderConfigCountsOnlyItsNamespace(t *testing.T) {
	ctx := testenv.Context(t)
	r, _ := newReconciler(func() config { return &cloudv1alpha1.ProviderConfig{} })
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-b"}})
	pc := &cloudv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: "tenant-a"},
		Spec: cloudv1alpha1.ProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-guangzhou"},
			Credentials: cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsSecret,
				SecretRef: &cloudv1alpha1.LocalSecretReference{Name: "tencent"}},
		},
	}
	mustCreate(t, pc,
		// The same Secret name in another namespace must not count: a tenant's
		// config reads only its own namespace.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "tencent"},
			Data: map[string][]byte{"secret_id": []byte("x"), "secret_key": []byte("y")}},
		usage("mine", "tenant-a", cloudv1alpha1.ProviderConfigKind, "tenant", true),
		usage("theirs", "tenant-b", cloudv1alpha1.ProviderConfigKind, "tenant", true),
		usage("cluster-kind", "tenant-a", cloudv1alpha1.ClusterProviderConfigKind, "tenant", true),
	)
	key := client.ObjectKeyFromObject(pc)
	reconcileOnce(t, r, key)
	got := &cloudv1alpha1.ProviderConfig{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatalf("getting the config: %v", err)
	}
	if got.Status.Users != 1 {
		t.Errorf("users = %d, want 1 (only the usage in its own namespace, of its own kind)", got.Status.Users)
	}
	if c := got.GetCondition(xpv2.TypeReady); c.Reason != cloudv1alpha1.ReasonSecretNotFound {
		t.Errorf("Ready reason = %s, want %s: the Secret in another namespace must not be used", c.Reason, cloudv1alpha1.ReasonSecretNotFound)
	}
}

// TestProviderConfigThatBreaksTheTenantRules: a stored ProviderConfig that
// uses the manager's identity or a cluster identity (created before the CRD
// had those rules), or an endpoint the manager's allow-list leaves out, is
// Ready=False NotAllowedForTenant and Stalled, with a warning Event; the
// same endpoint is Ready once the allow-list names it.
func TestProviderConfigThatBreaksTheTenantRules(t *testing.T) {
	ctx := testenv.Context(t)
	const ns = "tenant-rules"
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"},
			Data: map[string][]byte{cloudv1alpha1.SecretKeyAWSAccessKeyID: []byte("AKIA"), cloudv1alpha1.SecretKeyAWSSecretAccessKey: []byte("s")}})
	tenancytest.StoreBroken(t, env, ns, nil)
	mustCreate(t, tenancytest.AWSConfig(ns, "endpoint", func(s *cloudv1alpha1.ProviderConfigSpec) { s.Endpoint = "http://127.0.0.1:8600" }))

	emulator, err := tenancy.NewPolicy([]string{"http://127.0.0.1:8600/"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		policy     tenancy.Policy
		wantReason xpv2.ConditionReason
		wantText   string
	}{
		{tenancytest.ManagerIdentity, emulator, cloudv1alpha1.ReasonNotAllowedForTenant, "InjectedIdentity"},
		{tenancytest.OtherClusterIdentity, emulator, cloudv1alpha1.ReasonNotAllowedForTenant, "clusterIdentity"},
		{"endpoint", tenancy.Policy{}, cloudv1alpha1.ReasonNotAllowedForTenant, "endpoint http://127.0.0.1:8600 is not one the cluster admin allows"},
		// The same config once the admin allows its endpoint.
		{"endpoint", emulator, cloudv1alpha1.ReasonCredentialsAvailable, ""},
	}
	for _, tc := range cases {
		r, rec := newReconciler(func() config { return &cloudv1alpha1.ProviderConfig{} })
		r.tenancy = tc.policy
		key := client.ObjectKey{Namespace: ns, Name: tc.name}
		reconcileOnce(t, r, key)
		got := &cloudv1alpha1.ProviderConfig{}
		if err := env.Client.Get(ctx, key, got); err != nil {
			t.Fatalf("getting %s: %v", key, err)
		}
		ready, stalled := got.GetCondition(xpv2.TypeReady), got.GetCondition("Stalled")
		if ready.Reason != tc.wantReason || !strings.Contains(ready.Message, tc.wantText) {
			t.Errorf("%s: Ready = %s %s %q; want reason %s naming %q", tc.name, ready.Status, ready.Reason, ready.Message, tc.wantReason, tc.wantText)
		}
		events := strings.Join(drainEvents(rec), "\n")
		if tc.wantReason == cloudv1alpha1.ReasonNotAllowedForTenant {
			if ready.Status != corev1.ConditionFalse || stalled.Status != corev1.ConditionTrue {
				t.Errorf("%s: Ready %s, Stalled %s; want False and True: a person must change the config", tc.name, ready.Status, stalled.Status)
			}
			if !strings.Contains(events, "Warning "+reasonCredentialsNotReady) || !strings.Contains(events, tc.wantText) {
				t.Errorf("%s: events %q; want a %s warning naming %q", tc.name, events, reasonCredentialsNotReady, tc.wantText)
			}
		} else if ready.Status != corev1.ConditionTrue {
			t.Errorf("%s: Ready %s, want True once the endpoint is allowed", tc.name, ready.Status)
		}
	}
}

func TestUsageToConfig(t *testing.T) {
	cases := map[string]struct {
		kind string
		obj  client.Object
		want []reconcile.Request
	}{
		"namespaced config keeps the usage's namespace": {
			kind: cloudv1alpha1.ProviderConfigKind,
			obj:  usage("u", "ns", cloudv1alpha1.ProviderConfigKind, "pc", true),
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "pc"}}},
		},
		"cluster config drops it": {
			kind: cloudv1alpha1.ClusterProviderConfigKind,
			obj:  usage("u", "ns", cloudv1alpha1.ClusterProviderConfigKind, "default", true),
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "default"}}},
		},
		"other kind is ignored": {
			kind: cloudv1alpha1.ProviderConfigKind,
			obj:  usage("u", "ns", cloudv1alpha1.ClusterProviderConfigKind, "default", true),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := usageToConfig(tc.kind)(t.Context(), tc.obj)
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("requests = %v, want %v", got, tc.want)
			}
		})
	}
}
