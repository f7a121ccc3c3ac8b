package orphans

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// Options configure one report.
type Options struct {
	// Client reads provider configs and their credentials Secrets.
	Client client.Client
	// Dynamic lists the owner kinds' CRs (as unstructured, so a kind needs
	// no Go type here).
	Dynamic dynamic.Interface
	// OwnerKinds is the registry; nil means OwnerKinds().
	OwnerKinds []OwnerKind
	// Namespace selects ProviderConfigs: one namespace, or all when empty.
	// ClusterProviderConfigs are always included.
	Namespace string
	// ClusterName is the identity of configs that set none (the manager's
	// --cluster-name; empty: the kube-system namespace's UID).
	ClusterName string
	// TenantEndpoints are the endpoint overrides tenants' ProviderConfigs
	// may use (the manager's --tenant-endpoints); a config with another is
	// an error, as in the manager, and its account is not listed.
	TenantEndpoints []string
	// GracePeriod: unowned addresses younger than it are listed as Keep.
	GracePeriod time.Duration
	// List lists a config's tagged addresses; nil means ListAddresses.
	List func(ctx context.Context, cfg providerconfig.Config, identity string) ([]Address, error)
	// Clock is the time source of ages; nil means the real clock.
	Clock clock.WithTicker
}

// Report lists every provider config's orphans. A config that cannot be
// read or reached is an error in the joined error; the others are still
// reported.
func Report(ctx context.Context, o Options) ([]Finding, error) {
	if o.OwnerKinds == nil {
		o.OwnerKinds = OwnerKinds()
	}
	if o.List == nil {
		o.List = ListAddresses
	}
	tenants, err := tenancy.NewPolicy(o.TenantEndpoints)
	if err != nil {
		return nil, err
	}
	refs, err := configRefs(ctx, o.Client, o.Namespace)
	if err != nil {
		return nil, err
	}
	clusterName := o.ClusterName
	if clusterName == "" {
		var ns corev1.Namespace
		if err := o.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &ns); err == nil {
			clusterName = string(ns.GetUID())
		}
	}
	var out []Finding
	var errs []error
	for _, r := range refs {
		fs, err := reportOne(ctx, o, r, clusterName, tenants)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.key, err))
			continue
		}
		out = append(out, fs...)
	}
	return out, errors.Join(errs...)
}

type configRef struct {
	ref       xpv2.ProviderConfigReference
	namespace string
	key       string
}

// configRefs lists ClusterProviderConfigs, then ProviderConfigs, by name.
func configRefs(ctx context.Context, c client.Client, namespace string) ([]configRef, error) {
	var out []configRef
	var cpcs cloudv1alpha1.ClusterProviderConfigList
	if err := c.List(ctx, &cpcs); err != nil && !isNotServed(err) {
		return nil, fmt.Errorf("listing ClusterProviderConfigs: %w", err)
	}
	for _, p := range cpcs.Items {
		out = append(out, configRef{ref: xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: p.Name},
			key: cloudv1alpha1.ClusterProviderConfigKind + "/" + p.Name})
	}
	var pcs cloudv1alpha1.ProviderConfigList
	if err := c.List(ctx, &pcs, client.InNamespace(namespace)); err != nil && !isNotServed(err) {
		return nil, fmt.Errorf("listing ProviderConfigs: %w", err)
	}
	for _, p := range pcs.Items {
		out = append(out, configRef{ref: xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: p.Name},
			namespace: p.Namespace, key: cloudv1alpha1.ProviderConfigKind + "/" + p.Namespace + "/" + p.Name})
	}
	slices.SortStableFunc(out[len(cpcs.Items):], func(a, b configRef) int { return strings.Compare(a.key, b.key) })
	slices.SortStableFunc(out[:len(cpcs.Items)], func(a, b configRef) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

func isNotServed(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// reportOne runs the sweep once, in report mode, for one config: cloud
// first, then owners, as the manager's sweep does.
func reportOne(ctx context.Context, o Options, r configRef, clusterName string, tenants tenancy.Policy) ([]Finding, error) {
	cfg, err := providerconfig.Resolve(ctx, o.Client, &r.ref, r.namespace, clusterName, providerconfig.WithTenancy(tenants))
	if err != nil {
		return nil, err
	}
	identity := cfg.ClusterIdentity
	if identity == "" {
		return nil, errors.New("no cluster identity: the config sets none and the kube-system namespace could not be read; pass --cluster-name")
	}
	return judge(ctx, judgeInput{
		Key: r.key, Provider: string(cfg.Provider), Identity: identity, Namespace: r.namespace, Grace: o.GracePeriod, Clock: o.Clock,
		ListCloud: func(ctx context.Context) ([]Address, error) { return o.List(ctx, cfg, identity) },
		Served: func(ctx context.Context) map[string]bool {
			served := map[string]bool{}
			for _, k := range o.OwnerKinds {
				served[k.Kind] = isServed(ctx, o.Dynamic, k)
			}
			return served
		},
		Owners: func(ctx context.Context, served map[string]bool) (sets.Set[types.UID], error) {
			return ownerUIDs(ctx, o.Dynamic, o.OwnerKinds, served)
		},
	})
}

// judgeInput is one config's sweep, with its I/O as functions.
type judgeInput struct {
	Key, Provider, Identity string
	// Namespace is a tenant config's namespace; empty for a ClusterProviderConfig.
	Namespace string
	Grace     time.Duration
	Clock     clock.WithTicker
	ListCloud func(ctx context.Context) ([]Address, error)
	// Served says which owner kinds the API server serves.
	Served func(ctx context.Context) map[string]bool
	// Owners lists the UIDs of the served owner kinds' CRs.
	Owners func(ctx context.Context, served map[string]bool) (sets.Set[types.UID], error)
}

// judge runs internal/orphan's sweep once in report mode: cloud first, then
// owners, as the manager's sweep does.
func judge(ctx context.Context, in judgeInput) ([]Finding, error) {
	addrs := map[string]Address{}
	var served map[string]bool
	s, err := orphan.New(orphan.Config{
		Kind:        "plugin-" + in.Provider + "-address",
		Mode:        orphan.ModeReport,
		GracePeriod: in.Grace,
		Interval:    time.Hour, // one sweep only
		Clock:       in.Clock,
		ListCloud: func(ctx context.Context) ([]orphan.CloudObject, error) {
			list, err := in.ListCloud(ctx)
			if err != nil {
				return nil, err
			}
			// Which owner kinds can be listed decides which addresses can
			// be judged at all.
			served = in.Served(ctx)
			out := make([]orphan.CloudObject, 0, len(list))
			for _, a := range list {
				addrs[a.ID] = a
				out = append(out, cloudObject(a, in.Identity, in.Namespace, served))
			}
			return out, nil
		},
		ListOwners: func(ctx context.Context) (sets.Set[types.UID], error) { return in.Owners(ctx, served) },
	})
	if err != nil {
		return nil, err
	}
	rep, err := s.Sweep(ctx)
	if err != nil {
		return nil, err
	}
	return findings(in.Key, in.Provider, addrs, rep), nil
}

// isServed reports whether the kind's CRD is installed (a limit-1 list
// succeeds).
func isServed(ctx context.Context, dyn dynamic.Interface, k OwnerKind) bool {
	_, err := dyn.Resource(k.Resource).List(ctx, metav1.ListOptions{Limit: 1})
	return err == nil
}

// ownerUIDs lists the UIDs of every CR of the served owner kinds, in all
// namespaces (an address's owner may live anywhere).
func ownerUIDs(ctx context.Context, dyn dynamic.Interface, kinds []OwnerKind, served map[string]bool) (sets.Set[types.UID], error) {
	uids := sets.New[types.UID]()
	for _, k := range kinds {
		if !served[k.Kind] {
			continue
		}
		list, err := dyn.Resource(k.Resource).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", k.Resource.GroupResource(), err)
		}
		for _, it := range list.Items {
			uids.Insert(it.GetUID())
		}
	}
	return uids, nil
}
