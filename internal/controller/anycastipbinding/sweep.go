package anycastipbinding

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// SweepKind is the orphan sweep's kind label.
const SweepKind = "tencentcloud-anycast-ip"

// Sweep is the reverse reconciliation of AnycastIPBindings: it lists the
// addresses tagged with this cluster's identity (and aia-ip-controller's
// legacy identity) first, then the bindings and nodes, and releases an
// address of this cluster whose binding and node are both gone and that is
// older than the grace period (unbinding it first, only while it is still
// bound to the instance in its tags, and never releasing while the unbind
// task runs). Anything else (legacy addresses, addresses rebound elsewhere)
// is only reported.
type Sweep struct {
	*orphan.Sweeper
	conn   *Connector
	reader client.Reader
	opts   Options

	mu     sync.Mutex
	listed map[string]listedAddress
	legacy string
}

type listedAddress struct {
	addr tencentcloud.Address
	acct *account
}

// NewSweep builds the sweep (add it to the manager; it runs on the leader),
// taking turns with the process's other sweeps (nil turns: on its own
// tick).
func NewSweep(mgr ctrl.Manager, conn *Connector, o Options, turns *orphan.Turns) (*Sweep, error) {
	s := &Sweep{conn: conn, reader: mgr.GetAPIReader(), opts: o}
	sw, err := orphan.New(orphan.Config{
		Kind:         SweepKind,
		ListCloud:    s.listCloud,
		ListOwners:   s.listOwners,
		Delete:       s.delete,
		Mode:         o.OrphanMode,
		GracePeriod:  o.OrphanGracePeriod,
		Interval:     o.OrphanInterval,
		MaxDeletions: o.OrphanMaxDeletions,
		Turns:        turns,
	})
	if err != nil {
		return nil, err
	}
	s.Sweeper = sw
	return s, nil
}

// accounts are the provider configs to sweep: the translator's and every
// one a binding uses.
func (s *Sweep) accounts(ctx context.Context) ([]*account, error) {
	refs := map[string]xpv2.ProviderConfigReference{}
	def := providerConfigRef(s.opts.ProviderConfig)
	refs[def.Kind+"/"+def.Name] = *def
	var list networkingv1alpha1.AnycastIPBindingList
	if err := s.reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing AnycastIPBindings: %w", err)
	}
	for _, b := range list.Items {
		if r := b.Spec.ProviderConfigReference; r != nil {
			refs[r.Kind+"/"+r.Name] = *r
		}
	}
	var out []*account
	seen := map[*account]bool{}
	for _, ref := range refs {
		a, err := s.conn.account(ctx, ref)
		if err != nil {
			// Skipping an account only means its addresses are not swept
			// this time; it never makes anything look orphaned.
			if errors.Is(err, providerconfig.ErrNotFound) {
				log.FromContext(ctx).Info("Skipping a provider config that does not exist in the orphan sweep", "config", ref.Name)
			} else {
				log.FromContext(ctx).Error(err, "Skipping a provider config in the orphan sweep", "config", ref.Name)
			}
			continue
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

func (s *Sweep) listCloud(ctx context.Context) ([]orphan.CloudObject, error) {
	accts, err := s.accounts(ctx)
	if err != nil {
		return nil, err
	}
	listed := map[string]listedAddress{}
	legacy := ""
	for _, a := range accts {
		legacy = a.legacy
		queries := []map[string]string{{decide.TagCluster: a.identity}}
		if a.legacy != "" {
			queries = append(queries, map[string]string{networkingv1alpha1.LegacyTagClusterUUID: a.legacy})
		}
		for _, tags := range queries {
			as, err := a.cloud.DescribeAddresses(ctx, tencentcloud.AddressQuery{Tags: tags})
			if err != nil {
				if len(accts) == 1 {
					return nil, fmt.Errorf("listing this cluster's addresses: %w", err)
				}
				log.FromContext(ctx).Error(err, "Skipping a provider config in the orphan sweep", "config", a.ref.Name)
				continue
			}
			for _, addr := range as {
				listed[addr.ID] = listedAddress{addr: addr, acct: a}
			}
		}
	}
	s.mu.Lock()
	s.listed, s.legacy = listed, legacy
	s.mu.Unlock()
	out := make([]orphan.CloudObject, 0, len(listed))
	for _, l := range listed {
		out = append(out, decide.SweepObject(l.addr, l.acct.identity, l.acct.legacy))
	}
	return out, nil
}

func (s *Sweep) listOwners(ctx context.Context) (sets.Set[types.UID], error) {
	var bindings networkingv1alpha1.AnycastIPBindingList
	if err := s.reader.List(ctx, &bindings); err != nil {
		return nil, fmt.Errorf("listing AnycastIPBindings: %w", err)
	}
	uids, recorded := sets.New[types.UID](), sets.New[string]()
	for _, b := range bindings.Items {
		uids.Insert(b.UID)
		recorded.Insert(b.Status.AddressID, meta.GetExternalName(&b), b.Spec.AddressID)
	}
	recorded.Delete("")
	names := sets.New[string]()
	if err := orphan.EachLive(ctx, s.reader, corev1.SchemeGroupVersion.WithKind("NodeList"), func(n *metav1.PartialObjectMetadata) {
		names.Insert(n.Name)
	}, client.Limit(orphan.LiveNodePageSize)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	listed := make([]tencentcloud.Address, 0, len(s.listed))
	for _, l := range s.listed {
		listed = append(listed, l.addr)
	}
	legacy := s.legacy
	s.mu.Unlock()
	return decide.SweepOwners(listed, uids, recorded, names, legacy), nil
}

// delete unbinds (if bound to the instance in its tags), waits for UNBIND
// and releases one orphan.
func (s *Sweep) delete(ctx context.Context, obj orphan.CloudObject) error {
	s.mu.Lock()
	l, ok := s.listed[obj.ID]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("address %s was not listed", obj.ID)
	}
	cl := l.acct.cloud
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		as, err := cl.DescribeAddresses(ctx, tencentcloud.AddressQuery{IDs: []string{obj.ID}})
		if err != nil {
			return err
		}
		if len(as) == 0 {
			return nil
		}
		a := as[0]
		// Re-check on fresh data: never unbind from an instance other than
		// the tagged one.
		if fresh := decide.SweepObject(a, l.acct.identity, l.acct.legacy); fresh.ReportOnly != "" {
			return fmt.Errorf("address %s is no longer deletable: %s", a.ID, fresh.ReportOnly)
		}
		instance := cmp.Or(a.Tags[decide.TagInstanceID], a.Tags[networkingv1alpha1.LegacyTagInstanceID])
		// SweepObject just proved it this cluster's binding's.
		switch decide.DeleteStep(&a, instance, true) {
		case decide.StepNone:
			return nil
		case decide.StepRelease:
			if _, err := cl.ReleaseAddresses(ctx, a.ID); err != nil && !tencentcloud.IsNotFound(err) {
				return err
			}
			return nil
		case decide.StepDisassociate:
			task, err := cl.DisassociateAddress(ctx, a.ID)
			if err != nil && !tencentcloud.IsTaskRunning(err) && !tencentcloud.IsInvalidState(err) {
				return err
			}
			if err == nil {
				if err := waitTask(ctx, cl, task, s.opts.TaskPollInterval); err != nil {
					return err
				}
			}
		case decide.StepWait:
			if err := sleep(ctx, s.opts.TaskPollInterval); err != nil {
				return err
			}
		default:
			return fmt.Errorf("address %s is bound to %s, not to the instance in its tags", a.ID, a.InstanceID)
		}
	}
}

// waitTask polls DescribeTaskResult until the task ends.
func waitTask(ctx context.Context, cl Cloud, task uint64, every time.Duration) error {
	for {
		res, err := cl.TaskResult(ctx, task)
		if err != nil {
			return err
		}
		switch res {
		case tencentcloud.TaskSuccess:
			return nil
		case tencentcloud.TaskFailed:
			return fmt.Errorf("task %d: %w", task, tencentcloud.ErrTaskFailed)
		}
		if err := sleep(ctx, every); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}
