package podelasticip

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// The orphan sweeps' kind labels: one sweep per cloud, so the metrics say
// which cloud's addresses they count.
const (
	SweepKind        = "aws-elastic-ip"
	SweepKindTencent = "tencentcloud-elastic-ip"
)

// sweepKinds names each cloud's sweep.
var sweepKinds = map[cloudv1alpha1.Provider]string{
	cloudv1alpha1.ProviderAWS:          SweepKind,
	cloudv1alpha1.ProviderTencentCloud: SweepKindTencent,
}

func setupSweep(mgr ctrl.Manager, conn *connector, o Options, turns *orphan.Turns) error {
	for _, p := range []cloudv1alpha1.Provider{cloudv1alpha1.ProviderAWS, cloudv1alpha1.ProviderTencentCloud} {
		s, err := newSweeper(mgr.GetAPIReader(), conn, o, p, turns)
		if err != nil {
			return err
		}
		if err := mgr.Add(s); err != nil {
			return fmt.Errorf("adding the PodElasticIP orphan sweep of %s: %w", p, err)
		}
	}
	return nil
}

// NewSweeper builds the orphan sweep of the AWS accounts on its own
// clients, for tools and tests; the manager's sweeps run inside Setup.
func NewSweeper(reader client.Reader, kube client.Client, o Options, sc setup.Config) (*orphan.Sweeper, error) {
	return newSweeper(reader, newConnector(kube, reader, nil, o, sc), o, cloudv1alpha1.ProviderAWS, nil)
}

// NewTencentSweeper is NewSweeper for the Tencent Cloud accounts.
func NewTencentSweeper(reader client.Reader, kube client.Client, o Options, sc setup.Config) (*orphan.Sweeper, error) {
	return newSweeper(reader, newConnector(kube, reader, nil, o, sc), o, cloudv1alpha1.ProviderTencentCloud, nil)
}

// newSweeper lists, for every provider config's account of one cloud, the addresses
// tagged with this cluster's identity and those tagged only by the legacy
// controller for this cluster, then the PodElasticIPs (and, for legacy
// addresses, their pods). In a tenant's account (a ProviderConfig) only
// the addresses tagged with that tenant's namespace too are listed (see
// sweepScope). An address whose PodElasticIP is gone is
// released (Auto) or loses edgeplane's claim and ownership tags (Pool,
// Static) once past the grace period. Addresses kept for a pod name
// (AfterDelay) are left alone until their time is up; addresses of a
// PodElasticIP whose management policies leave out Delete, and legacy
// addresses whose pod is gone, are only ever reported. An address a cloud
// task is running on is left for the next sweep.
func newSweeper(reader client.Reader, conn *connector, o Options, provider cloudv1alpha1.Provider, turns *orphan.Turns) (*orphan.Sweeper, error) {
	var mu sync.Mutex
	found := map[string]sweptAddr{}
	// legacyNS are the namespaces of the pods legacy addresses were listed
	// for, read by ListOwners after ListCloud.
	var legacyNS sets.Set[string]
	return orphan.New(orphan.Config{
		Kind: sweepKinds[provider],
		ListCloud: func(ctx context.Context) ([]orphan.CloudObject, error) {
			scopes, err := sweepScopes(ctx, reader, conn, provider)
			if err != nil {
				return nil, err
			}
			now := conn.opts.clock().Now()
			next := map[string]sweptAddr{}
			nextNS := sets.New[string]()
			var out []orphan.CloudObject
			for _, scope := range scopes {
				acct := scope.acct
				addrs, err := acct.cloud.Describe(ctx, addressQuery{Tags: decide.SweepTags(acct.cluster, scope.namespace)})
				if err != nil {
					return nil, fmt.Errorf("listing this cluster's addresses: %w", err)
				}
				for _, a := range addrs {
					if _, dup := next[a.AllocationID]; dup || a.Pending != "" || !decide.InSweepScope(a, acct.cluster, scope.namespace) {
						continue
					}
					v := decide.Sweep(a, now)
					if v.Skip {
						continue
					}
					next[a.AllocationID] = sweptAddr{acct: acct, addr: a, owner: types.UID(v.OwnerUID), release: v.Release, reportOnly: v.ReportOnly}
					out = append(out, orphan.CloudObject{
						ID: a.AllocationID, CreatedAt: v.BornAt, OwnerUID: types.UID(v.OwnerUID), HasClusterIdentity: true,
						ReportOnly:  v.ReportOnly,
						Description: fmt.Sprintf("%s for pod %s (%s)", a.PublicIP, a.Tags[decide.TagPod], a.Tags[decide.TagMode]),
					})
				}
				legacy := cmp.Or(o.LegacyClusterName, acct.cluster)
				addrs, err = acct.cloud.Describe(ctx, addressQuery{Tags: map[string]string{decide.LegacyTagCluster: legacy}})
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
					next[a.AllocationID] = sweptAddr{acct: acct, addr: a, owner: v.OwnerUID, reportOnly: why}
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
			mu.Lock()
			dropOwned(found, out)
			mu.Unlock()
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
		Mode: o.OrphanMode, GracePeriod: o.OrphanGracePeriod, Interval: o.OrphanInterval, MaxDeletions: o.OrphanMaxDeletions, Turns: turns,
	})
}

type sweptAddr struct {
	acct *account
	addr decide.Address
	// owner is the UID the sweep judges the address by (its CloudObject's
	// OwnerUID).
	owner   types.UID
	release bool
	// reportOnly: never released nor untagged (see decide.SweepVerdict).
	reportOnly string
}

// dropOwned forgets the listed addresses whose owner exists: the sweep
// deletes only addresses without one (orphan.Decide), and the listing would
// otherwise be held until the next sweep, a copy of every address of the
// cluster.
func dropOwned(found map[string]sweptAddr, owners sets.Set[types.UID]) {
	maps.DeleteFunc(found, func(_ string, a sweptAddr) bool { return a.owner != "" && owners.Has(a.owner) })
}

// remove releases an orphaned Auto address or takes edgeplane's tags off a
// Pool or Static one (which stays associated if it is: only the claim goes).
// On a cloud with tasks the sweep waits for the disassociation before the
// release (the sweep is not a reconcile: it may wait).
func (s sweptAddr) remove(ctx context.Context) error {
	a := s.addr
	s.acct.look.Forget(a.AllocationID)
	if !s.release {
		return s.acct.cloud.Untag(ctx, a.AllocationID, decide.ReleaseKeys(a)...)
	}
	if a.Associated() {
		_, task, err := s.acct.cloud.Disassociate(ctx, a)
		if err != nil {
			return err
		}
		if err := s.acct.cloud.WaitForTask(ctx, task); err != nil {
			return fmt.Errorf("waiting for %s to be disassociated: %w", a.AllocationID, err)
		}
	}
	_, err := s.acct.cloud.Release(ctx, a)
	return err
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

// sweepScopes resolves every provider config of provider to its account and
// scope, once per pair. A config that cannot be resolved (missing, not
// allowed for a tenant, no credentials) is skipped and logged: its account
// is not swept this time, which never makes anything look orphaned.
func sweepScopes(ctx context.Context, reader client.Reader, conn *connector, provider cloudv1alpha1.Provider) ([]sweepScope, error) {
	refs, err := providerconfig.List(ctx, reader, provider, true)
	if err != nil {
		return nil, err
	}
	seen := map[sweepScope]bool{}
	var out []sweepScope
	var errs []error
	for _, r := range refs {
		acct, err := conn.account(ctx, &r.Ref, r.Namespace)
		if err != nil {
			// One broken config must not stop the sweep of the others.
			log.FromContext(ctx).Info("Skipping a provider config in the orphan sweep", "kind", r.Ref.Kind,
				"namespace", r.Namespace, "name", r.Ref.Name, "error", err.Error())
			errs = append(errs, err)
			continue
		}
		if s := (sweepScope{acct: acct, namespace: r.Namespace}); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
