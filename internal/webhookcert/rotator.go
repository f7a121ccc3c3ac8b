package webhookcert

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

const (
	// ManagedByLabel marks the Secret as written by this package.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "edgeplane-webhookcert"

	// certManagerAnnotation is set by cert-manager on the Secrets of its
	// Certificates. Two writers would replace each other's certificates
	// forever, so such a Secret is refused.
	certManagerAnnotation = "cert-manager.io/certificate-name"

	// maxSecretAttempts bounds the read-decide-write loop when other replicas
	// keep winning the race; each lost race means the Secret was just written
	// by someone else and is normally reused on the next read.
	maxSecretAttempts = 5

	// Watches are re-established with this backoff. It is real time, not
	// Options.Clock: it is about API connections, not certificate validity.
	minWatchBackoff = time.Second
	maxWatchBackoff = time.Minute
)

// Rotator provisions and rotates the webhook serving certificate of one
// manager replica. Use EnsureCerts before starting the manager and add the
// Rotator to the manager as a Runnable. See the package documentation.
type Rotator struct {
	client client.WithWatch
	opts   Options
	policy policy

	// mu serialises checks: EnsureCerts and Start may overlap.
	mu sync.Mutex
	// trigger asks the Start loop for an immediate check (watch events).
	trigger chan struct{}
}

var (
	_ manager.Runnable               = (*Rotator)(nil)
	_ manager.LeaderElectionRunnable = (*Rotator)(nil)
)

// New returns a Rotator. c must be a direct (uncached) client, e.g. from
// NewClient: a manager's cached client would start a cluster-wide informer
// for Secrets, and it cannot be used before the manager has started, which is
// when the certificate files are needed.
func New(c client.WithWatch, opts Options) (*Rotator, error) {
	if c == nil {
		return nil, errors.New("webhookcert: client is required")
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("webhookcert: invalid options: %w", err)
	}
	// Fail now, not at the first check, if the client cannot handle a type.
	kinds := []client.Object{&corev1.Secret{}}
	if len(opts.MutatingWebhookConfigurations) > 0 {
		kinds = append(kinds, &admissionregistrationv1.MutatingWebhookConfiguration{})
	}
	if len(opts.ValidatingWebhookConfigurations) > 0 {
		kinds = append(kinds, &admissionregistrationv1.ValidatingWebhookConfiguration{})
	}
	if len(opts.CRDs) > 0 {
		kinds = append(kinds, &apiextensionsv1.CustomResourceDefinition{})
	}
	for _, obj := range kinds {
		if _, err := c.GroupVersionKindFor(obj); err != nil {
			return nil, fmt.Errorf("webhookcert: the client's scheme does not know %T: %w", obj, err)
		}
	}
	return &Rotator{
		client:  c,
		opts:    opts,
		policy:  opts.policy(),
		trigger: make(chan struct{}, 1),
	}, nil
}

// NewClient returns a direct client whose scheme holds exactly the types a
// Rotator uses.
func NewClient(cfg *rest.Config) (client.WithWatch, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		apiextensionsv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("webhookcert: building scheme: %w", err)
		}
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("webhookcert: creating client: %w", err)
	}
	return c, nil
}

// NeedLeaderElection is false: every replica serves webhooks, so every
// replica needs the certificate files. caBundle injection is not restricted
// to the leader either (see the package documentation).
func (r *Rotator) NeedLeaderElection() bool { return false }

// EnsureCerts makes sure the Secret exists and is valid, writes the files to
// CertDir and injects the CA bundle into the configurations that exist. Call
// it before starting the manager: the webhook server loads the files when it
// starts and fails if they are missing. A configuration or CRD that does not
// exist yet is not an error; any other failure is, including failing to
// patch a caBundle (usually missing RBAC, better reported at start-up).
func (r *Rotator) EnsureCerts(ctx context.Context) error {
	ctx = r.withLogger(ctx)
	res, err := r.check(ctx)
	if len(res.missing) > 0 {
		ctrllog.FromContext(ctx).Info("Objects to inject the CA bundle into do not exist yet; will retry", "missing", res.missing)
	}
	return err
}

// Start keeps the certificate fresh until ctx is done: it re-checks every
// CheckInterval, every RetryInterval after a failure or while an object to
// inject into is missing, and at once when the Secret or one of those objects
// changes (watches). Failed checks are logged, never returned: the files
// already written keep serving, and stopping the manager would not help.
func (r *Rotator) Start(ctx context.Context) error {
	ctx = r.withLogger(ctx)
	log := ctrllog.FromContext(ctx)

	var wg sync.WaitGroup
	defer wg.Wait()
	for _, w := range r.watchTargets() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.watchLoop(ctx, w)
		}()
	}

	var lastMissing []string
	for {
		res, err := r.check(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := r.opts.CheckInterval
		if len(res.missing) > 0 {
			wait = r.opts.RetryInterval
		}
		if err != nil {
			log.Error(err, "Certificate check failed; retrying", "retryIn", r.opts.RetryInterval)
			wait = r.opts.RetryInterval
		} else if !slices.Equal(res.missing, lastMissing) {
			// Log changes only: a configuration that is installed late is
			// expected, and a line every RetryInterval would be noise.
			if len(res.missing) > 0 {
				log.Info("Objects to inject the CA bundle into do not exist yet; will retry", "missing", res.missing, "retryIn", r.opts.RetryInterval)
			} else {
				log.Info("All objects to inject the CA bundle into exist now")
			}
			lastMissing = res.missing
		}
		if !res.deferredUntil.IsZero() {
			if d := res.deferredUntil.Sub(r.opts.Clock.Now()); d < wait {
				wait = max(d, 0)
			}
		}

		timer := r.opts.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		case <-r.trigger:
			timer.Stop()
		}
	}
}

func (r *Rotator) withLogger(ctx context.Context) context.Context {
	log := ctrllog.FromContext(ctx).WithName("webhookcert").WithValues(
		"secret", r.opts.SecretNamespace+"/"+r.opts.SecretName, "certDir", r.opts.CertDir)
	return logr.NewContext(ctx, log)
}

// checkResult is what the Start loop needs to schedule the next check.
type checkResult struct {
	// missing lists objects to inject into that do not exist (kind/name).
	missing []string
	// deferredUntil is when a deferred serving renewal becomes due.
	deferredUntil time.Time
}

// check runs one full pass: Secret, then caBundles, then files.
//
// The caBundles are injected before the files are written so that, when the
// Secret holds a certificate from a CA the API server has not seen yet, the
// API server is told first; decide also defers such switches by
// caPropagationDelay, this ordering only shortens the window further. The
// files are written even if injection failed: the server needs them.
func (r *Rotator) check(ctx context.Context) (checkResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	log := ctrllog.FromContext(ctx)

	data, p, err := r.ensureSecret(ctx)
	if err != nil {
		return checkResult{}, err
	}
	res := checkResult{deferredUntil: p.deferredUntil}

	var clientErr error
	if r.opts.ClientSecretName != "" {
		var deferred time.Time
		deferred, clientErr = r.ensureClientSecret(ctx, data)
		if !deferred.IsZero() && (res.deferredUntil.IsZero() || deferred.Before(res.deferredUntil)) {
			res.deferredUntil = deferred
		}
	}

	missing, injectErr := r.injectCABundle(ctx, data[caCertKey])
	res.missing = missing

	wrote, fileErr := writeCertDir(r.opts.CertDir, map[string][]byte{
		tlsCertKey: data[tlsCertKey],
		tlsKeyKey:  data[tlsKeyKey],
		caCertKey:  data[caCertKey],
	})
	if fileErr != nil {
		fileErr = fmt.Errorf("writing certificate files: %w", fileErr)
	} else if wrote {
		kv := []any{}
		if leaf, err := parseServing(data[tlsCertKey], data[tlsKeyKey]); err == nil {
			kv = append(kv, "serial", leaf.cert.SerialNumber.Text(16), "notAfter", leaf.cert.NotAfter)
		}
		log.Info("Wrote serving certificate files", kv...)
	}
	return res, errors.Join(clientErr, injectErr, fileErr)
}

// ensureClientSecret keeps the client Secret's certificate signed by the
// CA in caData and its ca.crt equal to the bundle, creating or updating it
// as decideClient requires. It returns when a deferred renewal falls due.
func (r *Rotator) ensureClientSecret(ctx context.Context, caData map[string][]byte) (time.Time, error) {
	key := client.ObjectKey{Namespace: r.opts.SecretNamespace, Name: r.opts.ClientSecretName}
	cn := r.opts.ClientCommonName
	var p clientPlan
	_, err := r.syncSecret(ctx, key, "client certificate", func(data map[string][]byte, now time.Time) (map[string][]byte, bool, error) {
		p = decideClient(data, caData, cn, r.policy, now)
		if !p.changed() {
			return data, false, nil
		}
		out, err := executeClient(data, caData, p, cn, r.policy, now)
		return out, true, err
	}, func() []any { return []any{"reason", p.reason, "newClientCert", p.reissue} })
	return p.deferredUntil, err
}

// ensureSecret returns the data of a valid Secret, creating or updating it
// as decide requires.
//
// Replicas race here. Create fails with AlreadyExists and Update (which
// carries the resourceVersion read) with Conflict when another replica wrote
// first; then the Secret is read again and normally reused as is, so all
// replicas end up with the winner's certificates and nothing that a replica
// may already serve is overwritten.
func (r *Rotator) ensureSecret(ctx context.Context) (map[string][]byte, plan, error) {
	key := client.ObjectKey{Namespace: r.opts.SecretNamespace, Name: r.opts.SecretName}
	var p plan
	data, err := r.syncSecret(ctx, key, "certificate", func(data map[string][]byte, now time.Time) (map[string][]byte, bool, error) {
		p = decide(data, r.policy, now)
		if !p.changed() {
			if !p.deferredUntil.IsZero() {
				ctrllog.FromContext(ctx).V(1).Info("Serving certificate renewal deferred", "reason", p.certReason)
			}
			return data, false, nil
		}
		out, err := execute(data, p, r.policy, now)
		return out, true, err
	}, func() []any { return []any{"reason", p.reason(), "newCA", p.newCA, "newServingCert", p.reissue} })
	if err != nil {
		return nil, plan{}, err
	}
	return data, p, nil
}

// syncSecret reads the Secret key and writes what change makes of its data
// (nil when the Secret does not exist; changed false: nothing to write),
// creating it or updating it with the resourceVersion read. A lost race
// (AlreadyExists, Conflict) reads the winner's Secret again and normally
// keeps it, so every replica ends with the same certificates. what names the
// Secret in logs and errors, and updated says why it was rewritten.
func (r *Rotator) syncSecret(ctx context.Context, key client.ObjectKey, what string,
	change func(data map[string][]byte, now time.Time) (map[string][]byte, bool, error), updated func() []any) (map[string][]byte, error) {
	log := ctrllog.FromContext(ctx).WithValues("secretName", key.Name)
	for range maxSecretAttempts {
		now := r.opts.Clock.Now()
		secret := &corev1.Secret{}
		err := r.client.Get(ctx, key, secret)
		if apierrors.IsNotFound(err) {
			data, _, err := change(nil, now)
			if err != nil {
				return nil, fmt.Errorf("generating the %s for Secret %s: %w", what, key, err)
			}
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: key.Namespace,
					Name:      key.Name,
					Labels:    map[string]string{ManagedByLabel: managedByValue},
				},
				Type: corev1.SecretTypeTLS,
				Data: data,
			}
			err = r.client.Create(ctx, secret)
			if apierrors.IsAlreadyExists(err) {
				log.V(1).Info("Another replica created the " + what + " Secret first; reading it")
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("creating Secret %s: %w", key, err)
			}
			log.Info("Created " + what + " Secret")
			return data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading Secret %s: %w", key, err)
		}
		if owner := secret.Annotations[certManagerAnnotation]; owner != "" {
			return nil, fmt.Errorf("the Secret %s belongs to cert-manager Certificate %q; use another Secret name for self-managed certificates or let cert-manager manage them", key, owner)
		}
		data, changed, err := change(secret.Data, now)
		if err != nil {
			return nil, fmt.Errorf("renewing the %s in Secret %s: %w", what, key, err)
		}
		if !changed {
			return secret.Data, nil
		}
		secret.Data = data
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[ManagedByLabel] = managedByValue
		err = r.client.Update(ctx, secret)
		if apierrors.IsConflict(err) {
			log.V(1).Info("The " + what + " Secret changed while renewing; reading it again")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("updating Secret %s: %w", key, err)
		}
		log.Info("Updated "+what+" Secret", updated()...)
		return data, nil
	}
	return nil, fmt.Errorf("the Secret %s kept changing while being checked; gave up after %d attempts", key, maxSecretAttempts)
}

// watchTarget is one object whose changes should trigger a check.
type watchTarget struct {
	desc string
	list func() client.ObjectList
	opts []client.ListOption
}

// watchTargets watches exactly the named objects (a metadata.name field
// selector), which RBAC can grant by resourceNames; no cluster-wide list is
// needed.
func (r *Rotator) watchTargets() []watchTarget {
	byName := func(name string) client.ListOption {
		return client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)}
	}
	targets := []watchTarget{{
		desc: "Secret/" + r.opts.SecretNamespace + "/" + r.opts.SecretName,
		list: func() client.ObjectList { return &corev1.SecretList{} },
		opts: []client.ListOption{client.InNamespace(r.opts.SecretNamespace), byName(r.opts.SecretName)},
	}}
	if n := r.opts.ClientSecretName; n != "" {
		targets = append(targets, watchTarget{
			desc: "Secret/" + r.opts.SecretNamespace + "/" + n,
			list: func() client.ObjectList { return &corev1.SecretList{} },
			opts: []client.ListOption{client.InNamespace(r.opts.SecretNamespace), byName(n)},
		})
	}
	for _, n := range r.opts.MutatingWebhookConfigurations {
		targets = append(targets, watchTarget{
			desc: "MutatingWebhookConfiguration/" + n,
			list: func() client.ObjectList { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
			opts: []client.ListOption{byName(n)},
		})
	}
	for _, n := range r.opts.ValidatingWebhookConfigurations {
		targets = append(targets, watchTarget{
			desc: "ValidatingWebhookConfiguration/" + n,
			list: func() client.ObjectList { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
			opts: []client.ListOption{byName(n)},
		})
	}
	for _, n := range r.opts.CRDs {
		targets = append(targets, watchTarget{
			desc: "CustomResourceDefinition/" + n,
			list: func() client.ObjectList { return &apiextensionsv1.CustomResourceDefinitionList{} },
			opts: []client.ListOption{byName(n)},
		})
	}
	return targets
}

// watchLoop turns changes of one object into immediate checks: another
// replica rotating the Secret, or a webhook configuration being installed or
// re-applied without its caBundle. Watches are only an accelerator; if they
// fail, the periodic check still converges.
func (r *Rotator) watchLoop(ctx context.Context, w watchTarget) {
	log := ctrllog.FromContext(ctx).WithValues("watch", w.desc)
	backoff := minWatchBackoff
	for {
		started := time.Now()
		err := r.watchOnce(ctx, w)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Error(err, "Watch failed; relying on periodic checks until it is re-established", "retryIn", backoff)
		}
		if time.Since(started) > maxWatchBackoff {
			backoff = minWatchBackoff // it was healthy for a while
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxWatchBackoff)
	}
}

// watchOnce runs one watch until it ends. Without a resourceVersion the API
// server first sends the current object as an ADDED event, so every
// (re-)established watch also triggers a check and events missed while it
// was down do not matter.
func (r *Rotator) watchOnce(ctx context.Context, w watchTarget) error {
	wi, err := r.client.Watch(ctx, w.list(), w.opts...)
	if err != nil {
		return err
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				return apierrors.FromObject(ev.Object)
			}
			r.poke()
		}
	}
}

// poke requests a check without blocking; requests coalesce.
func (r *Rotator) poke() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}
