package nodeelasticip

import (
	"context"
	"fmt"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// SweepKind is the orphan sweep's kind label.
const SweepKind = "aws-node-elastic-ip"

// sweep is the reverse reconciliation of NodeElasticIPs: for every AWS
// ClusterProviderConfig's account it lists the addresses tagged with this
// cluster's identity and the kind first, then the NodeElasticIPs, and
// releases (Auto) or gives back (Pool, Static: edgeplane's tags removed)
// an address whose NodeElasticIP is gone once past the grace period.
// Addresses kept on purpose (management policies without Delete) are only
// reported. A NodeElasticIP is cluster-scoped and uses only cluster-wide
// accounts, so no tenant's account is ever listed.
type sweep struct {
	conn   *connector
	reader client.Reader

	mu     sync.Mutex
	listed map[string]listedAddress
}

type listedAddress struct {
	acct    *account
	addr    aws.Address
	release bool
}

func newSweep(reader client.Reader, conn *connector, o Options, turns *orphan.Turns) (*orphan.Sweeper, error) {
	s := &sweep{conn: conn, reader: reader}
	return orphan.New(orphan.Config{
		Kind: SweepKind, ListCloud: s.listCloud, ListOwners: s.listOwners, Delete: s.delete,
		Mode: o.OrphanMode, GracePeriod: o.OrphanGracePeriod, Interval: o.OrphanInterval, MaxDeletions: o.OrphanMaxDeletions, Turns: turns,
	})
}

// NewSweeper builds the orphan sweep on its own clients, for tools and
// tests; the manager's sweep runs inside Setup.
func NewSweeper(reader client.Reader, kube client.Client, o Options, clusterName string) (*orphan.Sweeper, error) {
	return newSweep(reader, newConnector(kube, reader, nil, o, clusterName, nil), o, nil)
}

// accounts resolves every AWS ClusterProviderConfig to its account, once
// per account. A config that cannot be resolved is skipped and logged: its
// account is not swept this time, which never makes anything look
// orphaned.
func (s *sweep) accounts(ctx context.Context) ([]*account, error) {
	cfgs, err := providerconfig.List(ctx, s.reader, cloudv1alpha1.ProviderAWS, false)
	if err != nil {
		return nil, err
	}
	var out []*account
	seen := map[*account]bool{}
	for _, c := range cfgs {
		a, err := s.conn.account(ctx, c.Ref)
		if err != nil {
			log.FromContext(ctx).Info("Skipping a provider config in the orphan sweep", "config", c.Ref.Name, "error", err.Error())
			continue
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

func (s *sweep) listCloud(ctx context.Context) ([]orphan.CloudObject, error) {
	accts, err := s.accounts(ctx)
	if err != nil {
		return nil, err
	}
	listed := map[string]listedAddress{}
	var out []orphan.CloudObject
	for _, a := range accts {
		addrs, err := a.aws.DescribeAddresses(ctx, aws.AddressQuery{Tags: decide.SweepTags(a.cluster)})
		if err != nil {
			return nil, fmt.Errorf("listing this cluster's node addresses in %s: %w", a.ref.Name, err)
		}
		for _, addr := range addrs {
			obj, release := decide.SweepObject(addr, a.cluster)
			if _, dup := listed[addr.AllocationID]; dup || !obj.HasClusterIdentity {
				// A second check on what the tag filter returned: a wrongly
				// released address cannot be brought back.
				continue
			}
			listed[addr.AllocationID] = listedAddress{acct: a, addr: addr, release: release}
			out = append(out, obj)
		}
	}
	s.mu.Lock()
	s.listed = listed
	s.mu.Unlock()
	return out, nil
}

func (s *sweep) listOwners(ctx context.Context) (sets.Set[types.UID], error) {
	var list networkingv1alpha1.NodeElasticIPList
	if err := s.reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing NodeElasticIPs: %w", err)
	}
	live, recorded := sets.New[types.UID](), sets.New[string]()
	for _, n := range list.Items {
		live.Insert(n.UID)
		recorded.Insert(n.Status.AllocationID, meta.GetExternalName(&n))
	}
	recorded.Delete("")
	s.mu.Lock()
	addrs := make([]aws.Address, 0, len(s.listed))
	for _, l := range s.listed {
		addrs = append(addrs, l.addr)
	}
	s.mu.Unlock()
	return decide.SweepOwners(addrs, live, recorded), nil
}

// delete releases an orphaned Auto address (disassociating it first) or
// takes edgeplane's tags off a Pool or Static one, which stays where it is.
func (s *sweep) delete(ctx context.Context, obj orphan.CloudObject) error {
	s.mu.Lock()
	l, ok := s.listed[obj.ID]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("address %s was not listed", obj.ID)
	}
	a := l.addr
	l.acct.look.Forget(types.UID(a.Tags[decide.TagOwnerUID]), a.AllocationID)
	if !l.release {
		return l.acct.aws.DeleteTags(ctx, a.AllocationID, decide.ReleaseKeys(a)...)
	}
	if a.Associated() {
		if err := l.acct.aws.DisassociateAddress(ctx, a.AssociationID); aws.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return aws.IgnoreNotFound(l.acct.aws.ReleaseAddress(ctx, a.AllocationID))
}
