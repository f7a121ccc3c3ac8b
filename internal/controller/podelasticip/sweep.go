package podelasticip

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
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
func NewSweeper(reader client.Reader, kube client.Client, o Options, cluster string) (*orphan.Sweeper, error) {
	return newSweeper(reader, newConnector(kube, reader, nil, o, cluster, nil), o)
}

// newSweeper lists, for every AWS provider config's account, the addresses
// tagged with this cluster's identity and those tagged only by the legacy
// controller for this cluster, then the PodElasticIPs (and, for legacy
// addresses, their pods). An address whose PodElasticIP is gone is
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
			accts, err := sweepAccounts(ctx, reader, conn)
			if err != nil {
				return nil, err
			}
			now := time.Now()
			next := map[string]sweptAddr{}
			nextNS := sets.New[string]()
			var out []orphan.CloudObject
			for _, acct := range accts {
				addrs, err := acct.aws.DescribeAddresses(ctx, aws.AddressQuery{Tags: map[string]string{decide.TagCluster: acct.cluster}})
				if err != nil {
					return nil, fmt.Errorf("listing this cluster's addresses: %w", err)
				}
				for _, a := range addrs {
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
				var pods metav1.PartialObjectMetadataList
				pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
				if err := reader.List(ctx, &pods, client.InNamespace(ns)); err != nil {
					return nil, fmt.Errorf("listing the pods of namespace %s: %w", ns, err)
				}
				for _, p := range pods.Items {
					out.Insert(decide.LegacyOwner(p.Namespace + "/" + p.Name))
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

// sweepAccounts resolves every AWS provider config to its account, once
// per account.
func sweepAccounts(ctx context.Context, reader client.Reader, conn *connector) ([]*account, error) {
	var refs []struct {
		ref xpv2.ProviderConfigReference
		ns  string
	}
	var cpcs cloudv1alpha1.ClusterProviderConfigList
	if err := reader.List(ctx, &cpcs); err != nil {
		return nil, fmt.Errorf("listing ClusterProviderConfigs: %w", err)
	}
	for _, c := range cpcs.Items {
		if c.Spec.Provider == cloudv1alpha1.ProviderAWS {
			refs = append(refs, struct {
				ref xpv2.ProviderConfigReference
				ns  string
			}{xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: c.Name}, ""})
		}
	}
	var pcs cloudv1alpha1.ProviderConfigList
	if err := reader.List(ctx, &pcs); err != nil {
		return nil, fmt.Errorf("listing ProviderConfigs: %w", err)
	}
	for _, c := range pcs.Items {
		if c.Spec.Provider == cloudv1alpha1.ProviderAWS {
			refs = append(refs, struct {
				ref xpv2.ProviderConfigReference
				ns  string
			}{xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: c.Name}, c.Namespace})
		}
	}
	seen := map[*account]bool{}
	var out []*account
	var errs []error
	for _, r := range refs {
		acct, err := conn.account(ctx, &r.ref, r.ns)
		if err != nil {
			// One broken config must not stop the sweep of the others.
			errs = append(errs, err)
			continue
		}
		if !seen[acct] {
			seen[acct] = true
			out = append(out, acct)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
