package webhookcert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// pollTimeout only keeps a broken test from hanging; nothing is asserted
// about how long convergence takes.
const pollTimeout = 2 * time.Minute

const serviceName = "edgeplane-webhook"

// fixture is one test's namespace and unique object names on the shared
// API server.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	c      client.WithWatch
	ns     string
	suffix string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	cfg := testConfig(t)
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := logr.NewContext(context.Background(), testr.New(t))
	suffix := utilrand.String(6)
	f := &fixture{t: t, ctx: ctx, c: c, ns: "wc-" + suffix, suffix: suffix}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return f
}

// name makes a cluster-scoped name unique to this test.
func (f *fixture) name(base string) string { return base + "-" + f.suffix }

func (f *fixture) options(certDir string) Options {
	return Options{
		SecretNamespace: f.ns,
		SecretName:      "webhook-cert",
		ServiceName:     serviceName,
		ExtraDNSNames:   []string{"localhost"},
		ExtraIPs:        []net.IP{net.ParseIP("127.0.0.1")},
		CertDir:         certDir,
	}
}

func (f *fixture) rotator(c client.WithWatch, opts Options) *Rotator {
	f.t.Helper()
	if c == nil {
		c = f.c
	}
	r, err := New(c, opts)
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return r
}

func (f *fixture) ensure(r *Rotator) {
	f.t.Helper()
	if err := r.EnsureCerts(f.ctx); err != nil {
		f.t.Fatalf("EnsureCerts: %v", err)
	}
}

// start runs r like a manager would, until the test ends.
func (f *fixture) start(r *Rotator) {
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("Start returned %v", err)
		}
	})
}

func (f *fixture) secret(name string) *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, s); err != nil {
		f.t.Fatalf("reading Secret: %v", err)
	}
	return s
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := f.c.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (f *fixture) get(obj client.Object) {
	f.t.Helper()
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		f.t.Fatalf("reading %T %s: %v", obj, obj.GetName(), err)
	}
}

// eventually polls cond until it holds; errors from cond are retried.
func (f *fixture) eventually(what string, cond func() (bool, error)) {
	f.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(f.ctx, 100*time.Millisecond, pollTimeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		f.t.Fatalf("%s: did not happen (%v, last error: %v)", what, err, last)
	}
}

func rules() []admissionregistrationv1.RuleWithOperations {
	// A resource nobody creates, so the API server never calls these
	// webhooks during the tests.
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{"example.edgeplane.io"},
			APIVersions: []string{"v1"},
			Resources:   []string{"widgets"},
		},
	}}
}

func mutatingConfig(name, ns string, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "edgeplane"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{
				Name: "nodes.edgeplane.io",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{
					Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: serviceName, Path: ptr.To("/mutate-node")},
					CABundle: caBundle,
				},
				Rules:                   rules(),
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
				FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
				TimeoutSeconds:          ptr.To[int32](3),
			},
			{
				Name:                    "pods.edgeplane.io",
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443/mutate-pod")},
				Rules:                   rules(),
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
				FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
				ReinvocationPolicy:      ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			},
		},
	}
}

func validatingConfig(name, ns string, caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{
				Name: "widgets.edgeplane.io",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{
					Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: serviceName, Path: ptr.To("/validate-widget")},
					CABundle: caBundle,
				},
				Rules:                   rules(),
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
				FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			},
		},
	}
}

func conversionCRD(group, ns string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						Service: &apiextensionsv1.ServiceReference{Namespace: ns, Name: serviceName, Path: ptr.To("/convert")},
					},
					ConversionReviewVersions: []string{"v1"},
				},
			},
		},
	}
}

// caBundles returns the caBundle of every webhook in a configuration, or of
// a CRD's conversion webhook.
func caBundles(obj client.Object) [][]byte {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		return [][]byte{crd.Spec.Conversion.Webhook.ClientConfig.CABundle}
	}
	_, bundles := webhookCABundles(obj)
	return bundles
}

// injected reports whether every caBundle of obj, read afresh, is bundle.
func (f *fixture) injected(obj client.Object, bundle []byte) (bool, error) {
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return false, err
	}
	for _, b := range caBundles(obj) {
		if !bytes.Equal(b, bundle) {
			return false, nil
		}
	}
	return true, nil
}

func (f *fixture) requireInjected(obj client.Object, bundle []byte) {
	f.t.Helper()
	ok, err := f.injected(obj, bundle)
	if err != nil {
		f.t.Fatal(err)
	}
	if !ok {
		f.t.Fatalf("%T %s: caBundle not injected", obj, obj.GetName())
	}
}

// tlsRoundTrip serves HTTPS from certDir the way the webhook server does
// (certwatcher) and calls it with a client that trusts only caBundle and
// expects serverName (empty: the IP 127.0.0.1 it dials), verifying at now.
func tlsRoundTrip(certDir string, caBundle []byte, serverName string, now func() time.Time) error {
	cw, err := certwatcher.New(filepath.Join(certDir, tlsCertKey), filepath.Join(certDir, tlsKeyKey))
	if err != nil {
		return fmt.Errorf("loading the written files: %w", err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: cw.GetCertificate, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		return errors.New("caBundle holds no certificate")
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, Time: now, MinVersion: tls.VersionTLS12}}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: pollTimeout}
	resp, err := hc.Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if string(body) != "ok" {
		return fmt.Errorf("unexpected response %q", body)
	}
	return nil
}

func (f *fixture) requireTLS(certDir string, caBundle []byte, now func() time.Time) {
	f.t.Helper()
	for _, name := range []string{
		serviceName + "." + f.ns + ".svc",
		serviceName + "." + f.ns + ".svc.cluster.local",
		"localhost",
		"", // 127.0.0.1
	} {
		if err := tlsRoundTrip(certDir, caBundle, name, now); err != nil {
			f.t.Errorf("TLS round trip as %q: %v", name, err)
		}
	}
}

// secretWrites counts Secret writes that reached the API server.
type secretWrites struct {
	mu                             sync.Mutex
	creates, updates               int
	createAttempts, updateAttempts int
	// staleGet, if set, answers the first Get of a Secret.
	staleGet       *corev1.Secret
	staleGetServed bool
	// notFoundOnce makes the first Get of a Secret answer NotFound.
	notFoundOnce       bool
	notFoundOnceServed bool
}

func (w *secretWrites) snapshot() (creates, updates, createAttempts, updateAttempts int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.creates, w.updates, w.createAttempts, w.updateAttempts
}

// instrumented wraps c to count Secret writes and, if configured, to
// simulate races by answering one Get with a stale Secret or NotFound.
func instrumented(c client.WithWatch, w *secretWrites) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if s, ok := obj.(*corev1.Secret); ok {
				w.mu.Lock()
				defer w.mu.Unlock()
				switch {
				case w.notFoundOnce && !w.notFoundOnceServed:
					w.notFoundOnceServed = true
					return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
				case w.staleGet != nil && !w.staleGetServed:
					w.staleGetServed = true
					w.staleGet.DeepCopyInto(s)
					return nil
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, obj, opts...)
			if _, ok := obj.(*corev1.Secret); ok {
				w.mu.Lock()
				w.createAttempts++
				if err == nil {
					w.creates++
				}
				w.mu.Unlock()
			}
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			err := c.Update(ctx, obj, opts...)
			if _, ok := obj.(*corev1.Secret); ok {
				w.mu.Lock()
				w.updateAttempts++
				if err == nil {
					w.updates++
				}
				w.mu.Unlock()
			}
			return err
		},
	})
}

func leafFromPEM(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	certs, err := cert.ParseCertsPEM(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

// TestSecretCreatedOnceAndShared: the first replica creates the Secret, the
// second reuses it, and both write identical files.
func TestSecretCreatedOnceAndShared(t *testing.T) {
	f := newFixture(t)
	writes := &secretWrites{}
	c := instrumented(f.c, writes)
	dir1, dir2 := t.TempDir(), t.TempDir()
	r1 := f.rotator(c, f.options(dir1))
	r2 := f.rotator(c, f.options(dir2))

	f.ensure(r1)
	first := f.secret("webhook-cert")
	if first.Type != corev1.SecretTypeTLS || first.Labels[ManagedByLabel] != managedByValue {
		t.Errorf("Secret type %q, labels %v: want %q and the managed-by label", first.Type, first.Labels, corev1.SecretTypeTLS)
	}
	if diff := cmp.Diff([]string{caCertKey, caKeyKey, tlsCertKey, tlsKeyKey}, sortedDataKeys(first)); diff != "" {
		t.Errorf("Secret keys (-want +got):\n%s", diff)
	}

	f.ensure(r2)
	second := f.secret("webhook-cert")
	if second.ResourceVersion != first.ResourceVersion {
		t.Errorf("second replica changed the Secret (resourceVersion %s -> %s)", first.ResourceVersion, second.ResourceVersion)
	}
	want := certFiles(first.Data)
	if diff := cmp.Diff(want, readCertDir(t, dir1)); diff != "" {
		t.Errorf("replica 1 files differ from the Secret (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, readCertDir(t, dir2)); diff != "" {
		t.Errorf("replica 2 files differ from the Secret (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir1, caKeyKey)); err == nil {
		t.Error("the CA key was written to the cert dir")
	}

	// A later check changes nothing: no Secret write, no file rewrite.
	link, err := os.Readlink(filepath.Join(dir1, dataLink))
	if err != nil {
		t.Fatal(err)
	}
	f.ensure(r1)
	if again, _ := os.Readlink(filepath.Join(dir1, dataLink)); again != link {
		t.Errorf("files rewritten although nothing changed (%s -> %s)", link, again)
	}
	if third := f.secret("webhook-cert"); third.ResourceVersion != first.ResourceVersion {
		t.Errorf("Secret rewritten although nothing changed")
	}
	creates, updates, _, _ := writes.snapshot()
	if creates != 1 || updates != 0 {
		t.Errorf("Secret written %d times (create) and %d times (update), want 1 and 0", creates, updates)
	}

	f.requireTLS(dir2, first.Data[caCertKey], time.Now)
}

func sortedDataKeys(s *corev1.Secret) []string {
	return slices.Sorted(maps.Keys(s.Data))
}

// TestCABundleInjection: configurations that exist at start-up are patched
// by EnsureCerts, ones created later (or re-applied without caBundle) by the
// running Rotator; only caBundle changes, and nothing is written when it is
// already right. A TLS client using the injected bundle trusts the server.
func TestCABundleInjection(t *testing.T) {
	f := newFixture(t)
	stale, err := newCA(time.Now(), time.Hour*24)
	if err != nil {
		t.Fatal(err)
	}
	stalePEM, err := cert.EncodeCertificates(stale.cert)
	if err != nil {
		t.Fatal(err)
	}

	mBefore := mutatingConfig(f.name("mutating-before"), f.ns, stalePEM)
	vBefore := validatingConfig(f.name("validating-before"), f.ns, nil)
	crd := conversionCRD(f.suffix+".example.edgeplane.io", f.ns)
	f.create(mBefore)
	f.create(vBefore)
	f.create(crd)
	mBeforeCreated := mBefore.DeepCopy()
	vBeforeCreated := vBefore.DeepCopy()

	mAfter := mutatingConfig(f.name("mutating-after"), f.ns, nil)
	vAfter := validatingConfig(f.name("validating-after"), f.ns, nil)

	dir := t.TempDir()
	opts := f.options(dir)
	opts.MutatingWebhookConfigurations = []string{mBefore.Name, mAfter.Name}
	opts.ValidatingWebhookConfigurations = []string{vBefore.Name, vAfter.Name}
	opts.CRDs = []string{crd.Name}
	opts.RetryInterval = 500 * time.Millisecond
	r := f.rotator(nil, opts)

	// Missing configurations are not an error at start-up.
	f.ensure(r)
	bundle := f.secret("webhook-cert").Data[caCertKey]
	f.requireInjected(mBefore, bundle)
	f.requireInjected(vBefore, bundle)
	f.requireInjected(crd, bundle)

	// Nothing but caBundle changed.
	withoutCABundles := cmp.Transformer("withoutCABundle", func(c admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
		c.CABundle = nil
		return c
	})
	if diff := cmp.Diff(mBeforeCreated.Webhooks, mBefore.Webhooks, withoutCABundles); diff != "" {
		t.Errorf("MutatingWebhookConfiguration changed beyond caBundle (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(vBeforeCreated.Webhooks, vBefore.Webhooks, withoutCABundles); diff != "" {
		t.Errorf("ValidatingWebhookConfiguration changed beyond caBundle (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(mBeforeCreated.Labels, mBefore.Labels); diff != "" {
		t.Errorf("labels changed (-before +after):\n%s", diff)
	}

	// Configurations installed after start-up.
	f.start(r)
	f.create(mAfter)
	f.create(vAfter)
	f.eventually("caBundle injected into the late MutatingWebhookConfiguration", func() (bool, error) { return f.injected(mAfter, bundle) })
	f.eventually("caBundle injected into the late ValidatingWebhookConfiguration", func() (bool, error) { return f.injected(vAfter, bundle) })

	// Re-applied without caBundle (as a Helm upgrade might): restored.
	f.get(mBefore)
	for i := range mBefore.Webhooks {
		mBefore.Webhooks[i].ClientConfig.CABundle = nil
	}
	if err := f.c.Update(f.ctx, mBefore); err != nil {
		t.Fatal(err)
	}
	f.eventually("caBundle restored after re-apply", func() (bool, error) { return f.injected(mBefore, bundle) })

	// Once everything is right, a check writes nothing.
	objs := []client.Object{mBefore, vBefore, mAfter, vAfter, crd}
	versions := map[string]string{}
	for _, o := range objs {
		f.get(o)
		versions[o.GetName()] = o.GetResourceVersion()
	}
	f.ensure(r)
	for _, o := range objs {
		f.get(o)
		if o.GetResourceVersion() != versions[o.GetName()] {
			t.Errorf("%s was written although its caBundle was already right", o.GetName())
		}
	}

	// The injected bundle is what a webhook client trusts.
	f.requireTLS(dir, vAfter.Webhooks[0].ClientConfig.CABundle, time.Now)
}

// TestRenewalWithRunningReplicas: two running replicas renew the serving
// certificate once the clock enters the renewal window, converge on the same
// files, and keep the CA and the injected bundle.
func TestRenewalWithRunningReplicas(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	m := mutatingConfig(f.name("mutating"), f.ns, nil)
	f.create(m)

	writes := &secretWrites{}
	c := instrumented(f.c, writes)
	dirs := []string{t.TempDir(), t.TempDir()}
	var rs []*Rotator
	for _, dir := range dirs {
		opts := f.options(dir)
		opts.Clock = fc
		opts.CheckInterval = time.Hour
		opts.RetryInterval = time.Minute
		opts.MutatingWebhookConfigurations = []string{m.Name}
		rs = append(rs, f.rotator(c, opts))
	}
	for _, r := range rs {
		f.ensure(r)
	}
	for _, r := range rs {
		f.start(r)
	}
	before := f.secret("webhook-cert")
	f.requireInjected(m, before.Data[caCertKey])
	mVersion := m.ResourceVersion
	oldLeaf := leafFromPEM(t, before.Data[tlsCertKey])

	fc.Step(DefaultCertValidity - DefaultCertRenewBefore + time.Hour)
	var after *corev1.Secret
	f.eventually("both replicas serve a renewed certificate", func() (bool, error) {
		after = f.secret("webhook-cert")
		if bytes.Equal(after.Data[tlsCertKey], before.Data[tlsCertKey]) {
			// A loop that was busy during the step waits on a timer set
			// after it; move time on by a check interval (the renewal
			// window is 30 days, there is room).
			fc.Step(time.Hour)
			return false, nil
		}
		want := certFiles(after.Data)
		for _, dir := range dirs {
			if !cmp.Equal(want, readCertDir(t, dir)) {
				return false, nil
			}
		}
		return true, nil
	})

	if !bytes.Equal(after.Data[caCertKey], before.Data[caCertKey]) || !bytes.Equal(after.Data[caKeyKey], before.Data[caKeyKey]) {
		t.Error("the CA changed although only the serving certificate was due")
	}
	newLeaf := leafFromPEM(t, after.Data[tlsCertKey])
	if !newLeaf.NotAfter.After(oldLeaf.NotAfter) {
		t.Errorf("renewed certificate expires %s, not after the old one (%s)", newLeaf.NotAfter, oldLeaf.NotAfter)
	}
	f.get(m)
	if m.ResourceVersion != mVersion {
		t.Error("the webhook configuration was rewritten although the CA did not change")
	}
	_, updates, _, _ := writes.snapshot()
	if updates != 1 {
		t.Errorf("Secret updated %d times, want exactly 1 renewal", updates)
	}
	f.requireTLS(dirs[1], m.Webhooks[0].ClientConfig.CABundle, fc.Now)
}

// TestCARotation walks a CA through its life with short validities: the new
// CA is added to the injected bundle next to the old one while the serving
// certificate signed by the old CA stays in use; the serving certificate
// moves to the new CA at its next renewal; the old CA leaves the bundle when
// it expires. Clients are served successfully throughout.
func TestCARotation(t *testing.T) {
	f := newFixture(t)
	day := 24 * time.Hour
	fc := clocktesting.NewFakeClock(time.Now())
	m := mutatingConfig(f.name("mutating"), f.ns, nil)
	f.create(m)
	dir := t.TempDir()
	opts := f.options(dir)
	opts.Clock = fc
	opts.CAValidity = 2 * 365 * day
	opts.CARenewBefore = 90 * day
	opts.CertValidity = 365 * day
	opts.CertRenewBefore = 30 * day
	opts.MutatingWebhookConfigurations = []string{m.Name}
	r := f.rotator(nil, opts)

	type state struct {
		cas  []*x509.Certificate
		leaf *x509.Certificate
		data map[string][]byte
	}
	check := func(step string) state {
		t.Helper()
		f.ensure(r)
		s := f.secret("webhook-cert")
		f.requireInjected(m, s.Data[caCertKey])
		if diff := cmp.Diff(certFiles(s.Data), readCertDir(t, dir)); diff != "" {
			t.Fatalf("%s: files differ from the Secret (-want +got):\n%s", step, diff)
		}
		f.requireTLS(dir, s.Data[caCertKey], fc.Now)
		cas, err := cert.ParseCertsPEM(s.Data[caCertKey])
		if err != nil {
			t.Fatal(err)
		}
		return state{cas: cas, leaf: leafFromPEM(t, s.Data[tlsCertKey]), data: s.Data}
	}
	signedBy := func(leaf, ca *x509.Certificate) bool { return leaf.CheckSignatureFrom(ca) == nil }

	start := check("start")
	ca1 := start.cas[0]

	// Serving renewal under the first CA.
	fc.SetTime(start.leaf.NotAfter.Add(-20 * day))
	renewed := check("first serving renewal")
	if len(renewed.cas) != 1 || !renewed.cas[0].Equal(ca1) || renewed.leaf.Equal(start.leaf) {
		t.Fatal("first renewal should have replaced the serving certificate only")
	}

	// The CA enters its renewal window while the serving certificate does
	// not need renewal: bundle [new, old], serving certificate unchanged.
	fc.SetTime(ca1.NotAfter.Add(-80 * day))
	rotated := check("CA rotation")
	if len(rotated.cas) != 2 || !rotated.cas[1].Equal(ca1) || rotated.cas[0].Equal(ca1) {
		t.Fatalf("bundle after CA rotation has %d CAs, want [new, old]", len(rotated.cas))
	}
	if !rotated.leaf.Equal(renewed.leaf) {
		t.Error("serving certificate replaced in the same check as the CA")
	}
	ca1PEM, err := cert.EncodeCertificates(ca1)
	if err != nil {
		t.Fatal(err)
	}
	// A client that still has the old bundle keeps working.
	f.requireTLS(dir, ca1PEM, fc.Now)
	ca2 := rotated.cas[0]

	// Next serving renewal: signed by the new CA.
	fc.SetTime(rotated.leaf.NotAfter.Add(-25 * day))
	moved := check("serving renewal under the new CA")
	if !signedBy(moved.leaf, ca2) || moved.leaf.Equal(rotated.leaf) {
		t.Error("renewed serving certificate is not signed by the new CA")
	}
	if len(moved.cas) != 2 {
		t.Errorf("bundle has %d CAs while the old CA is still valid, want 2", len(moved.cas))
	}

	// The old CA expires and is dropped from the bundle.
	fc.SetTime(ca1.NotAfter.Add(day))
	pruned := check("old CA expired")
	if len(pruned.cas) != 1 || !pruned.cas[0].Equal(ca2) {
		t.Errorf("bundle after the old CA expired has %d CAs, want only the new one", len(pruned.cas))
	}
	if !pruned.leaf.Equal(moved.leaf) {
		t.Error("serving certificate replaced although it was not due")
	}
}

// TestConcurrentStart: replicas starting at the same moment converge on one
// Secret, created exactly once and never overwritten.
func TestConcurrentStart(t *testing.T) {
	f := newFixture(t)
	const rounds, replicas = 3, 4
	for round := range rounds {
		writes := &secretWrites{}
		c := instrumented(f.c, writes)
		secretName := fmt.Sprintf("race-%d", round)
		var rs []*Rotator
		var dirs []string
		for range replicas {
			dir := t.TempDir()
			opts := f.options(dir)
			opts.SecretName = secretName
			rs = append(rs, f.rotator(c, opts))
			dirs = append(dirs, dir)
		}
		ready := make(chan struct{})
		errs := make([]error, replicas)
		var wg sync.WaitGroup
		for i, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ready
				errs[i] = r.EnsureCerts(f.ctx)
			}()
		}
		close(ready)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, replica %d: %v", round, i, err)
			}
		}

		s := f.secret(secretName)
		want := certFiles(s.Data)
		for i, dir := range dirs {
			if diff := cmp.Diff(want, readCertDir(t, dir)); diff != "" {
				t.Errorf("round %d, replica %d: files differ from the Secret (-want +got):\n%s", round, i, diff)
			}
		}
		creates, updates, createAttempts, _ := writes.snapshot()
		if creates != 1 || updates != 0 {
			t.Errorf("round %d: %d creates and %d updates reached the API server, want 1 and 0", round, creates, updates)
		}
		t.Logf("round %d: %d replicas tried to create the Secret", round, createAttempts)
	}
}

// TestLostRacesReread forces the two races deterministically: a replica
// that finds no Secret and then loses the create, and one that renews from
// a stale read and then loses the update. Both must adopt the winner's
// Secret, not overwrite it.
func TestLostRacesReread(t *testing.T) {
	t.Run("create", func(t *testing.T) {
		f := newFixture(t)
		f.ensure(f.rotator(nil, f.options(t.TempDir())))
		winner := f.secret("webhook-cert")

		writes := &secretWrites{notFoundOnce: true}
		dir := t.TempDir()
		f.ensure(f.rotator(instrumented(f.c, writes), f.options(dir)))

		if _, _, createAttempts, _ := writes.snapshot(); createAttempts != 1 {
			t.Fatalf("%d create attempts, want 1 (the race was not simulated)", createAttempts)
		}
		if got := f.secret("webhook-cert"); got.ResourceVersion != winner.ResourceVersion {
			t.Error("the Secret was overwritten by the replica that lost the create")
		}
		if diff := cmp.Diff(certFiles(winner.Data), readCertDir(t, dir)); diff != "" {
			t.Errorf("loser's files differ from the winner's Secret (-want +got):\n%s", diff)
		}
	})

	t.Run("renewal", func(t *testing.T) {
		f := newFixture(t)
		fc := clocktesting.NewFakeClock(time.Now())
		opts := f.options(t.TempDir())
		opts.Clock = fc
		f.ensure(f.rotator(nil, opts))
		stale := f.secret("webhook-cert")

		fc.Step(DefaultCertValidity - DefaultCertRenewBefore + time.Hour)
		f.ensure(f.rotator(nil, opts))
		winner := f.secret("webhook-cert")
		if bytes.Equal(winner.Data[tlsCertKey], stale.Data[tlsCertKey]) {
			t.Fatal("the first replica did not renew")
		}

		writes := &secretWrites{staleGet: stale}
		loserOpts := opts
		loserOpts.CertDir = t.TempDir()
		f.ensure(f.rotator(instrumented(f.c, writes), loserOpts))

		if _, updates, _, updateAttempts := writes.snapshot(); updateAttempts != 1 || updates != 0 {
			t.Fatalf("%d update attempts, %d successful; want 1 rejected (the race was not simulated)", updateAttempts, updates)
		}
		if got := f.secret("webhook-cert"); got.ResourceVersion != winner.ResourceVersion {
			t.Error("the Secret was overwritten by the replica that lost the renewal")
		}
		if diff := cmp.Diff(certFiles(winner.Data), readCertDir(t, loserOpts.CertDir)); diff != "" {
			t.Errorf("loser's files differ from the winner's Secret (-want +got):\n%s", diff)
		}
	})
}

// TestRefusesCertManagerSecret: a Secret owned by cert-manager is never
// taken over.
func TestRefusesCertManagerSecret(t *testing.T) {
	f := newFixture(t)
	// Certificates cert-manager would have issued (for other names).
	issued, err := execute(nil, decide(nil, testPolicy(), time.Now()), testPolicy(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "webhook-cert", Annotations: map[string]string{certManagerAnnotation: "edgeplane-serving-cert"}},
		Type:       corev1.SecretTypeTLS,
		Data:       certFiles(issued),
	}
	f.create(s)
	err = f.rotator(nil, f.options(t.TempDir())).EnsureCerts(f.ctx)
	if err == nil || !strings.Contains(err.Error(), "cert-manager") {
		t.Fatalf("EnsureCerts = %v, want an error about cert-manager", err)
	}
	if got := f.secret("webhook-cert"); got.ResourceVersion != s.ResourceVersion {
		t.Error("cert-manager's Secret was modified")
	}
}
