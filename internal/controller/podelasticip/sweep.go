package podelasticip

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// SweepKind is the orphan sweep's kind label.
const SweepKind = "aws-elastic-ip"

func setupSweep(mgr ctrl.Manager, conn *connector, o Options) error {
	s, err := newSweeper(mgr.GetAPIReader(), conn, o)
	if err != nil {
		return err
	}
	if err := mgr.Add(s); err != nil {
		return fmt.Errorf("adding the PodElasticIP orphan sweep: %w", err)
	}
	return nil
}

// NewSweeper builds the orphan sweep on its own clients, for tools and
// tests; the manager's sweep runs inside Setup.
func NewSweeper(reader client.Reader, kube client.Client, o Options, sc setup.Config) (*orphan.Sweeper, error) {
	return newSweeper(reader, newConnector(kube, reader, nil, o, sc), o)
}

// newSweeper lists, for every AWS provider config's account, the addresses
// tagged with this cluster's identity and those tagged only by the legacy
// controller for this cluster, then the PodElasticIPs (and, for legacy
// addresses, their pods). In a tenant's account (a ProviderConfig) only
// the addresses tagged with that tenant's namespace too are listed (see
// sweepScope). An address whose PodElasticIP is gone is
// released (Auto) or loses edgeplane's claim and ownership tags (Pool,
// Static) once past the grace period. Addresses kept for a pod name
// (AfterDelay) are left alone until their time is up; addresses of a
// PodElasticIP whose management policies leave out Delete, and legacy
// addresses whose pod is gone, are only ever reported.
func newSweeper(reader client.Reader, conn *connector, o Options) (*orphan.Sweeper, error) {
	var mu sync.Mutex
	found := map[string]sweptAddr{}
	// legacyNS are the namespaces of the pods legacy addresses were listed
	// for, read by ListOwners after ListCloud.
	var legacyNS sets.Set[string]
	return orphan.New(orphan.Config{
		Kind: SweepKind,
		ListCloud: func(ctx context.Context) ([]orphan.CloudObject, error) {
			scopes, err := sweepScopes(ctx, reader, conn)
			if err != nil {
				return nil, err
			}
			now := conn.opts.clock().Now()
			next := map[string]sweptAddr{}
			nextNS := sets.New[string]()
			var out []orphan.CloudObject
			for _, scope := range scopes {
				acct := scope.acct
				addrs, err := acct.aws.DescribeAddresses(ctx, aws.AddressQuery{Tags: decide.SweepTags(acct.cluster, scope.namespace)})
				if err != nil {
					return nil, fmt.Errorf("listing this cluster's addresses: %w", err)
				}
				for _, a := range addrs {
					if _, dup := next[a.AllocationID]; dup || !decide.InSweepScope(a, acct.cluster, scope.namespace) {
						continue
					}
					v := decide.Sweep(a, now)
					if v.Skip {
						continue
					}
					next[a.AllocationID] = sweptAddr{acct: acct, addr: a, release: v.Release, reportOnly: v.ReportOnly}
					out = append(out, orphan.CloudObject{
						ID: a.AllocationID, CreatedAt: v.BornAt, OwnerUID: types.UID(v.OwnerUID), HasClusterIdentity: true,
						ReportOnly:  v.ReportOnly,
						Description: fmt.Sprintf("%s for pod %s (%s)", a.PublicIP, a.Tags[decide.TagPod], a.Tags[decide.TagMode]),
					})
				}
				legacy := cmp.Or(o.LegacyClusterName, acct.cluster)
				addrs, err = acct.aws.DescribeAddresses(ctx, aws.AddressQuery{Tags: map[string]string{decide.LegacyTagCluster: legacy}})
				if err != nil {
					return nil, fmt.Errorf("listing the legacy controller's addresses: %w", err)
				}
				for _, a := range addrs {
					v := decide.SweepLegacy(a, legacy)
					if _, dup := next[a.AllocationID]; v.Skip || dup {
						continue
					}
					// A tenant's account: only the legacy addresses of its
					// namespace's pods.
					if scope.namespace != "" && v.Namespace != scope.namespace {
						continue
					}
					const why = "tagged only by aws-pod-eip-controller: edgeplane did not allocate it and never releases it"
					next[a.AllocationID] = sweptAddr{acct: acct, addr: a, reportOnly: why}
					if v.Namespace != "" {
						nextNS.Insert(v.Namespace)
					}
					out = append(out, orphan.CloudObject{
						ID: a.AllocationID, OwnerUID: v.OwnerUID, ReportOnly: why,
						Description: fmt.Sprintf("%s for pod %s (aws-pod-eip-controller %s, cluster %s)",
							a.PublicIP, v.Pod, a.Tags[decide.LegacyTagType], legacy),
					})
				}
			}
			mu.Lock()
			found, legacyNS = next, nextNS
			mu.Unlock()
			return out, nil
		},
		ListOwners: func(ctx context.Context) (sets.Set[types.UID], error) {
			var list networkingv1alpha1.PodElasticIPList
			if err := reader.List(ctx, &list); err != nil {
				return nil, fmt.Errorf("listing PodElasticIPs: %w", err)
			}
			out := sets.New[types.UID]()
			for _, p := range list.Items {
				out.Insert(p.UID)
				// A PodElasticIP for the pod adopts (or is about to adopt)
				// its legacy address.
				out.Insert(decide.LegacyOwner(p.Namespace + "/" + p.Spec.PodName))
			}
			mu.Lock()
			namespaces := sets.List(legacyNS)
			mu.Unlock()
			for _, ns := range namespaces {
				if err := orphan.EachLive(ctx, reader, corev1.SchemeGroupVersion.WithKind("PodList"), func(p *metav1.PartialObjectMetadata) {
					out.Insert(decide.LegacyOwner(p.Namespace + "/" + p.Name))
				}, client.InNamespace(ns)); err != nil {
					return nil, fmt.Errorf("listing the pods of namespace %s: %w", ns, err)
				}
			}
			return out, nil
		},
		Delete: func(ctx context.Context, obj orphan.CloudObject) error {
			mu.Lock()
			s, ok := found[obj.ID]
			mu.Unlock()
			if !ok {
				return nil
			}
			if s.reportOnly != "" {
				// orphan.Sweeper never asks for it; refuse anyway.
				return fmt.Errorf("address %s is never removed by the sweep: %s", obj.ID, s.reportOnly)
			}
			return s.remove(ctx)
		},
		Mode: o.OrphanMode, GracePeriod: o.OrphanGracePeriod, Interval: o.SweepInterval,
	})
}

type sweptAddr struct {
	acct    *account
	addr    aws.Address
	release bool
	// reportOnly: never released nor untagged (see decide.SweepVerdict).
	reportOnly string
}

// remove releases an orphaned Auto address or takes edgeplane's tags off a
// Pool or Static one (which stays associated if it is: only the claim goes).
func (s sweptAddr) remove(ctx context.Context) error {
	a := s.addr
	s.acct.look.Forget(a.AllocationID)
	if !s.release {
		return s.acct.aws.DeleteTags(ctx, a.AllocationID, decide.ReleaseKeys(a)...)
	}
	if a.Associated() {
		if err := s.acct.aws.DisassociateAddress(ctx, a.AssociationID); aws.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return aws.IgnoreNotFound(s.acct.aws.ReleaseAddress(ctx, a.AllocationID))
}

// sweepScope is the part of one account a sweep may judge: every address
// of this cluster in a ClusterProviderConfig's account (namespace empty:
// the cluster admin's account), or only one tenant's in a ProviderConfig's
// (namespace: the config's). Addresses created before edgeplane tagged
// namespaces carry none, so a tenant's sweep never lists them; in a
// ClusterProviderConfig's account they are swept as before.
type sweepScope struct {
	acct      *account
	namespace string
}

// sweepScopes resolves every AWS provider config to its account and
// scope, once per pair. A config that cannot be resolved (missing, not
// allowed for a tenant, no credentials) is skipped and logged: its account
// is not swept this time, which never makes anything look orphaned.
func sweepScopes(ctx context.Context, reader client.Reader, conn *connector) ([]sweepScope, error) {
	type configRef struct {
		ref xpv2.ProviderConfigReference
		ns  string
	}
	var refs []configRef
	var cpcs cloudv1alpha1.ClusterProviderConfigList
	if err := reader.List(ctx, &cpcs); err != nil {
		return nil, fmt.Errorf("listing ClusterProviderConfigs: %w", err)
	}
	for _, c := range cpcs.Items {
		if c.Spec.Provider == cloudv1alpha1.ProviderAWS {
			refs = append(refs, configRef{xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: c.Name}, ""})
		}
	}
	var pcs cloudv1alpha1.ProviderConfigList
	if err := reader.List(ctx, &pcs); err != nil {
		return nil, fmt.Errorf("listing ProviderConfigs: %w", err)
	}
	for _, c := range pcs.Items {
		if c.Spec.Provider == cloudv1alpha1.ProviderAWS {
			refs = append(refs, configRef{xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: c.Name}, c.Namespace})
		}
	}
	seen := map[sweepScope]bool{}
	var out []sweepScope
	var errs []error
	for _, r := range refs {
		acct, err := conn.account(ctx, &r.ref, r.ns)
		if err != nil {
			// One broken config must not stop the sweep of the others.
			log.FromContext(ctx).Info("Skipping a provider config in the orphan sweep", "kind", r.ref.Kind,
				"namespace", r.ns, "name", r.ref.Name, "error", err.Error())
			errs = append(errs, err)
			continue
		}
		if s := (sweepScope{acct: acct, namespace: r.ns}); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
