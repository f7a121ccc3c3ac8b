// Package tenancy decides what a tenant's namespaced ProviderConfig may ask
// of the manager. A ProviderConfig is a tenant's cloud account and nothing
// more: credentials from a Secret in its own namespace, or none for an
// endpoint the cluster admin allows. It may not borrow the manager's own
// cloud identity (InjectedIdentity), set the identity that marks cloud
// objects as this cluster's (clusterIdentity, which steers the orphan
// sweep), or send the manager's signed requests to a URL of its choosing.
//
// The API server rejects the first two by CEL (apis/cloud/v1alpha1); the
// endpoint allow-list is the manager's (--tenant-endpoints), which CEL
// cannot see. Check is the one decision both the ProviderConfig reconciler
// (Ready=False, NotAllowedForTenant) and providerconfig.Resolve (no cloud
// client) apply, so a config stored before the CEL rules existed, or with
// an endpoint the admin did not allow, is never used.
package tenancy

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
)

// Policy is what the cluster admin allows tenants beyond the fixed rules:
// the endpoint overrides a ProviderConfig may use. The zero Policy allows
// none, so an unconfigured manager talks to tenants' accounts only at the
// clouds' public endpoints.
type Policy struct {
	// endpoints are the allowed endpoints, normalised, sorted.
	endpoints []string
}

// NewPolicy builds a Policy allowing the given endpoint URLs (the manager's
// --tenant-endpoints). Each must be an http or https URL with a host and no
// user info, query or fragment.
func NewPolicy(endpoints []string) (Policy, error) {
	var p Policy
	var errs []error
	for _, e := range endpoints {
		n, err := normalizeEndpoint(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant endpoint %q: %w", e, err))
			continue
		}
		if !slices.Contains(p.endpoints, n) {
			p.endpoints = append(p.endpoints, n)
		}
	}
	slices.Sort(p.endpoints)
	return p, errors.Join(errs...)
}

// Endpoints returns the allowed endpoints, normalised and sorted.
func (p Policy) Endpoints() []string { return slices.Clone(p.endpoints) }

// AllowsEndpoint reports whether a ProviderConfig may send requests to
// endpoint. URLs are compared after normalisation (case of scheme and
// host, default port, trailing slash), never by prefix: an allowed
// http://emulator:8600 allows neither http://emulator:8600.evil.example
// nor http://user@emulator:8600.
func (p Policy) AllowsEndpoint(endpoint string) bool {
	n, err := normalizeEndpoint(endpoint)
	return err == nil && slices.Contains(p.endpoints, n)
}

// Check returns why a ProviderConfig's spec breaks the tenant rules, every
// reason joined, or nil when it keeps them. The messages are stable (no
// timestamps, sorted lists): they become condition messages.
func (p Policy) Check(spec *cloudv1alpha1.ProviderConfigSpec) error {
	var errs []error
	if spec.Credentials.Source == cloudv1alpha1.CredentialsInjectedIdentity {
		errs = append(errs, errors.New("credentials.source InjectedIdentity would act with the manager's own cloud identity: only a ClusterProviderConfig may use it"))
	}
	if spec.ClusterIdentity != "" {
		errs = append(errs, errors.New("clusterIdentity marks cloud objects as a cluster's and steers its orphan sweep: only a ClusterProviderConfig (or the manager's --cluster-name) may set it"))
	}
	switch {
	case spec.Endpoint != "" && !p.AllowsEndpoint(spec.Endpoint):
		errs = append(errs, fmt.Errorf("endpoint %s is not one the cluster admin allows for tenants (%s)", spec.Endpoint, p.describe()))
	case spec.Endpoint == "" && spec.Credentials.Source == cloudv1alpha1.CredentialsNone:
		errs = append(errs, errors.New("credentials.source None is only for an endpoint override the cluster admin allows"))
	}
	return errors.Join(errs...)
}

// describe names the allow-list for a message.
func (p Policy) describe() string {
	if len(p.endpoints) == 0 {
		return "the manager's --tenant-endpoints is empty: no tenant endpoint overrides"
	}
	return "the manager's --tenant-endpoints: " + strings.Join(p.endpoints, ", ")
}

// normalizeEndpoint returns the canonical form of an endpoint URL:
// lower-case scheme and host, no default port, no trailing slash.
func normalizeEndpoint(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("not a URL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errors.New("not an http or https URL")
	}
	if u.Hostname() == "" {
		return "", errors.New("no host")
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", errors.New("user info, query and fragment are not allowed")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	hostport := host
	switch {
	case port != "":
		hostport = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		hostport = "[" + host + "]" // an IPv6 literal
	}
	return scheme + "://" + hostport + strings.TrimRight(u.EscapedPath(), "/"), nil
}
