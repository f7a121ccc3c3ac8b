// Package webhookcert manages the manager's webhook serving certificate when
// cert-manager is not installed ("self-managed" mode).
//
// With cert-manager, the deployment mounts a cert-manager Certificate's
// Secret as the webhook server's CertDir and cert-manager's CA injector fills
// every caBundle; this package is not used. Without it, a Rotator does both
// jobs:
//
//   - It keeps a CA and a serving certificate in one Secret (ca.crt, ca.key,
//     tls.crt, tls.key), so that all replicas serve the same certificate and
//     the API server needs to trust only one bundle. Whoever finds the Secret
//     missing creates it; a replica that loses that race (AlreadyExists) or
//     a renewal race (Conflict) reads the winner's Secret instead of writing
//     its own.
//   - It writes tls.crt, tls.key and ca.crt to the webhook server's CertDir,
//     swapping them atomically (see files.go), whenever the Secret's content
//     differs; controller-runtime's certwatcher then reloads them.
//   - It patches the caBundle of every webhook in the named
//     Mutating/ValidatingWebhookConfigurations, and of the conversion webhook
//     of the named CRDs, when it differs from ca.crt, touching no other field.
//
// # Renewal
//
// The serving certificate (ECDSA P-256, default 1 year, capped at the CA's
// expiry) is replaced 30 days before it expires, or at once if it does not
// verify against the bundle or does not cover
// <service>.<namespace>.svc, <service>.<namespace>.svc.<cluster domain> and
// the extra names and IPs. The CA (default 10 years) is kept as long as it is
// valid, so clients keep trusting what they were given; 1 year before it
// expires a new CA is generated and put first in ca.crt, and the old one stays
// in the bundle until it expires. The current serving certificate, signed by
// the old CA, remains valid and trusted; a renewal that falls due within
// 10 minutes of a CA rotation waits that long, so that the API server has
// the new bundle before anyone serves a certificate only the new CA can
// vouch for. All time decisions use Options.Clock.
//
// # Wiring
//
// The webhook server loads the files when it starts and fails if they are
// missing, and the manager starts webhook servers before other runnables,
// so call EnsureCerts before mgr.Start, then add the Rotator to the manager
// to keep the files fresh. Use a direct client (NewClient): the manager's
// client is cached, would watch every Secret in the cluster, and does not
// work before the manager starts.
//
//	c, err := webhookcert.NewClient(ctrl.GetConfigOrDie())
//	rot, err := webhookcert.New(c, webhookcert.Options{...CertDir: certDir...})
//	if err := rot.EnsureCerts(ctx); err != nil { ... }
//	if err := mgr.Add(rot); err != nil { ... }
//	// webhook.NewServer(webhook.Options{CertDir: certDir, ...})
//
// # Leader election
//
// The Rotator runs on every replica (NeedLeaderElection is false): every
// replica serves webhooks and needs the files. caBundle injection also runs on
// every replica rather than on the leader only. The injected value is a pure
// function of the shared Secret, patches are only sent when a caBundle
// differs and carry the resourceVersion they were computed from, so replicas
// cannot fight over it. Leaving it to the leader would let the caBundle lag
// behind a Secret written by a non-leader, for instance by a new replica
// during a rolling update while the old leader still holds the lease, or
// while no leader has been elected yet at first install.
//
// # Changes are noticed by
//
// Watches on exactly the named Secret, configurations and CRDs (field
// selector metadata.name) trigger an immediate check, so another replica's
// rotation or a configuration installed or re-applied later is handled at
// once. A check also runs every CheckInterval (default 30 minutes), and every
// RetryInterval (default 10 seconds) after a failure or while a named object
// is missing.
//
// # RBAC
//
//   - secrets in the Secret's namespace: get, create, update, watch
//     (get/update/watch can be limited by resourceNames, create cannot)
//   - mutatingwebhookconfigurations, validatingwebhookconfigurations and, if
//     CRDs are named, customresourcedefinitions: get, watch, patch
//     (limitable by resourceNames)
package webhookcert
