package webhookcert

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"k8s.io/utils/clock"
)

// Default durations. The CA is long-lived because every rotation has to be
// propagated to the API server (caBundle) before it can be used; serving
// certificates are short-lived because replacing them is free.
const (
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultCARenewBefore   = 365 * 24 * time.Hour
	DefaultCertValidity    = 365 * 24 * time.Hour
	DefaultCertRenewBefore = 30 * 24 * time.Hour
	DefaultCheckInterval   = 30 * time.Minute
	DefaultRetryInterval   = 10 * time.Second
	DefaultClusterDomain   = "cluster.local"
)

// Options configure a Rotator. Zero durations take the defaults above.
type Options struct {
	// SecretNamespace and SecretName name the one Secret that holds the CA and
	// the serving certificate for all replicas. Required.
	SecretNamespace string
	SecretName      string

	// ServiceNamespace and ServiceName name the Service in front of the
	// webhook server; the serving certificate covers
	// <ServiceName>.<ServiceNamespace>.svc and
	// <ServiceName>.<ServiceNamespace>.svc.<ClusterDomain>. ServiceName is
	// required; ServiceNamespace defaults to SecretNamespace.
	ServiceNamespace string
	ServiceName      string
	// ClusterDomain defaults to "cluster.local".
	ClusterDomain string

	// ExtraDNSNames and ExtraIPs are added to the serving certificate, e.g.
	// "localhost" and 127.0.0.1 when the manager runs outside the cluster and
	// the webhook configurations use a url: clientConfig. All replicas must
	// ask for the same names: a replica that finds a name missing reissues
	// the certificate, so two disagreeing replicas would keep replacing it.
	ExtraDNSNames []string
	ExtraIPs      []net.IP

	// CertDir receives tls.crt, tls.key and ca.crt. It must be the webhook
	// server's CertDir (webhook.Options.CertDir) and writable (an emptyDir in
	// the pod, never a Secret volume). Each process needs its own CertDir.
	// Required.
	CertDir string

	// MutatingWebhookConfigurations, ValidatingWebhookConfigurations and CRDs
	// name the objects whose caBundle fields are kept equal to the CA bundle:
	// every webhook in the named configurations, and
	// spec.conversion.webhook.clientConfig of the named
	// CustomResourceDefinitions (only when their conversion strategy is
	// Webhook). Objects that do not exist yet are retried until they do.
	MutatingWebhookConfigurations   []string
	ValidatingWebhookConfigurations []string
	CRDs                            []string

	// ClientSecretName, if set, names a second Secret in SecretNamespace
	// where the Rotator keeps a client certificate signed by the same CA,
	// named ClientCommonName, for the callers of a server that requires one
	// (client.go). It holds tls.crt, tls.key and ca.crt, never ca.key.
	ClientSecretName string
	ClientCommonName string

	// CAValidity is how long a new CA is valid; CARenewBefore is how long
	// before its expiry a new CA is generated. The old CA stays in the bundle
	// until it expires, so clients that only know the old bundle keep working.
	CAValidity    time.Duration
	CARenewBefore time.Duration
	// CertValidity is how long a new serving certificate is valid (capped at
	// the CA's expiry); CertRenewBefore is how long before its expiry it is
	// replaced. CertRenewBefore must be shorter than CARenewBefore, otherwise
	// a serving certificate capped by an ageing CA would be born inside its
	// own renewal window and be replaced on every check.
	CertValidity    time.Duration
	CertRenewBefore time.Duration

	// CheckInterval is how often the Secret, the files and the caBundles are
	// re-checked even without a watch event; it bounds how late a time-based
	// renewal can happen. RetryInterval replaces it after a failed check or
	// while a named webhook configuration or CRD does not exist.
	CheckInterval time.Duration
	RetryInterval time.Duration

	// Clock is used for every certificate time decision and for the check
	// timers; tests inject k8s.io/utils/clock/testing.FakeClock. Defaults to
	// the real clock.
	Clock clock.Clock
}

// withDefaults returns a copy of o with zero values replaced by defaults.
func (o Options) withDefaults() Options {
	if o.ServiceNamespace == "" {
		o.ServiceNamespace = o.SecretNamespace
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = DefaultClusterDomain
	}
	setDefault(&o.CAValidity, DefaultCAValidity)
	setDefault(&o.CARenewBefore, DefaultCARenewBefore)
	setDefault(&o.CertValidity, DefaultCertValidity)
	setDefault(&o.CertRenewBefore, DefaultCertRenewBefore)
	setDefault(&o.CheckInterval, DefaultCheckInterval)
	setDefault(&o.RetryInterval, DefaultRetryInterval)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// validate checks a defaulted Options.
func (o Options) validate() error {
	var errs []error
	for _, f := range []struct{ name, value string }{
		{"SecretNamespace", o.SecretNamespace},
		{"SecretName", o.SecretName},
		{"ServiceName", o.ServiceName},
		{"CertDir", o.CertDir},
	} {
		if f.value == "" {
			errs = append(errs, fmt.Errorf("%s is required", f.name))
		}
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{
		{"CAValidity", o.CAValidity},
		{"CARenewBefore", o.CARenewBefore},
		{"CertValidity", o.CertValidity},
		{"CertRenewBefore", o.CertRenewBefore},
		{"CheckInterval", o.CheckInterval},
		{"RetryInterval", o.RetryInterval},
	} {
		if d.value < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %s", d.name, d.value))
		}
	}
	if o.CARenewBefore >= o.CAValidity {
		errs = append(errs, fmt.Errorf("CARenewBefore (%s) must be shorter than CAValidity (%s)", o.CARenewBefore, o.CAValidity))
	}
	if o.CertRenewBefore >= o.CertValidity {
		errs = append(errs, fmt.Errorf("CertRenewBefore (%s) must be shorter than CertValidity (%s)", o.CertRenewBefore, o.CertValidity))
	}
	if o.CertRenewBefore >= o.CARenewBefore {
		errs = append(errs, fmt.Errorf("CertRenewBefore (%s) must be shorter than CARenewBefore (%s)", o.CertRenewBefore, o.CARenewBefore))
	}
	// A serving certificate whose renewal is deferred while a new CA
	// propagates must not expire during the deferral.
	if o.CertRenewBefore <= caPropagationDelay {
		errs = append(errs, fmt.Errorf("CertRenewBefore (%s) must be longer than %s", o.CertRenewBefore, caPropagationDelay))
	}
	if (o.ClientSecretName == "") != (o.ClientCommonName == "") {
		errs = append(errs, errors.New("ClientSecretName and ClientCommonName go together"))
	}
	if o.ClientSecretName != "" && o.ClientSecretName == o.SecretName {
		errs = append(errs, errors.New("ClientSecretName must differ from SecretName: the client Secret never holds the CA key"))
	}
	for _, ip := range o.ExtraIPs {
		if ip == nil {
			errs = append(errs, errors.New("ExtraIPs must not contain a nil IP"))
		}
	}
	return errors.Join(errs...)
}

// policy is the part of the options the pure certificate decisions need.
func (o Options) policy() policy {
	svc := o.ServiceName + "." + o.ServiceNamespace + ".svc"
	dns := []string{svc, svc + "." + o.ClusterDomain}
	for _, n := range o.ExtraDNSNames {
		if !slices.Contains(dns, n) {
			dns = append(dns, n)
		}
	}
	return policy{
		dnsNames:        dns,
		ips:             o.ExtraIPs,
		caValidity:      o.CAValidity,
		caRenewBefore:   o.CARenewBefore,
		certValidity:    o.CertValidity,
		certRenewBefore: o.CertRenewBefore,
	}
}
