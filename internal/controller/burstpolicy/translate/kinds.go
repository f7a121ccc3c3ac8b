package translate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
)

var (
	podGroupKind        = schema.GroupKind{Kind: "Pod"}
	replicaSetGroupKind = schema.GroupKind{Group: appsv1.GroupName, Kind: "ReplicaSet"}
)

// Kinds is the set of workload kinds whose legacy annotations are
// translated. The pod webhook asks it whether a new pod's policy will
// exist (it gates the pod only then), and the ReplicaSet translator whether
// a ReplicaSet is translated through its controller.
type Kinds struct {
	mu    sync.RWMutex
	kinds map[schema.GroupKind]bool
}

// NewKinds returns an empty set.
func NewKinds() *Kinds { return &Kinds{kinds: map[schema.GroupKind]bool{}} }

func (k *Kinds) add(gk schema.GroupKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kinds[gk] = true
}

// Has reports whether kind gk is translated.
func (k *Kinds) Has(gk schema.GroupKind) bool {
	if k == nil {
		return false
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.kinds[gk]
}

// translated reports whether the kind of the controller ref is translated.
func (k *Kinds) translated(ref *metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	if k == nil { // only the built-in kinds
		_, ok := builtinWorkloads[ref.Kind]
		return ok && builtinWorkloads[ref.Kind].gvk.Group == gv.Group
	}
	return k.Has(gv.WithKind(ref.Kind).GroupKind())
}

// TranslatesPodsOf reports whether the legacy annotations of a pod with
// this controller (nil: a bare pod) become a BurstPolicy: the pod's own
// when it is bare, its ReplicaSet's (or that one's Deployment's), its
// StatefulSet's, its Job's, or its controller's of a kind with a scale
// subresource.
func (k *Kinds) TranslatesPodsOf(controller *metav1.OwnerReference) bool {
	if k == nil {
		return false
	}
	if controller == nil {
		return k.Has(podGroupKind)
	}
	return k.translated(controller)
}

// ScaleWorkload is a namespaced kind served with a scale subresource.
type ScaleWorkload struct {
	schema.GroupVersionKind
	// Resource is its plural resource name.
	Resource string
}

// scaleWorkloads picks from discovery's resource lists the namespaced
// kinds with a scale subresource, other than those translated by type
// (Deployment, StatefulSet, ReplicaSet of apps), sorted by group and kind.
func scaleWorkloads(lists []*metav1.APIResourceList) []ScaleWorkload {
	var out []ScaleWorkload
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		scaled := map[string]bool{}
		for _, r := range l.APIResources {
			if parent, sub, ok := strings.Cut(r.Name, "/"); ok && sub == "scale" {
				scaled[parent] = true
			}
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !r.Namespaced || !scaled[r.Name] {
				continue
			}
			gvk := gv.WithKind(r.Kind)
			if w, ok := builtinWorkloads[r.Kind]; ok && w.gvk.Group == gv.Group {
				continue
			}
			out = append(out, ScaleWorkload{GroupVersionKind: gvk, Resource: r.Name})
		}
	}
	slices.SortFunc(out, func(a, b ScaleWorkload) int {
		return strings.Compare(a.Group+"/"+a.Kind, b.Group+"/"+b.Kind)
	})
	return out
}

// DiscoverScaleWorkloads lists the namespaced kinds the API server serves
// with a scale subresource, in their preferred versions, apart from those
// translated by type. Groups that fail discovery are skipped (and logged);
// their kinds are picked up at the next start.
func DiscoverScaleWorkloads(ctx context.Context, d discovery.DiscoveryInterface) ([]ScaleWorkload, error) {
	// ServerPreferredResources drops subresources: read every version, keep
	// the preferred ones.
	groups, lists, err := d.ServerGroupsAndResources()
	if err != nil {
		if !discovery.IsGroupDiscoveryFailedError(err) || len(lists) == 0 {
			return nil, fmt.Errorf("discovering the kinds with a scale subresource: %w", err)
		}
		log.FromContext(ctx).Info("Some API groups could not be discovered; their kinds with a scale subresource are not translated", "error", err.Error())
	}
	preferred := map[string]string{}
	for _, g := range groups {
		preferred[g.Name] = g.PreferredVersion.GroupVersion
	}
	var kept []*metav1.APIResourceList
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err == nil && preferred[gv.Group] == l.GroupVersion {
			kept = append(kept, l)
		}
	}
	return scaleWorkloads(kept), nil
}

// mayWatch reports whether the manager may list and watch the resource
// (in namespace, or everywhere when it is empty).
func mayWatch(ctx context.Context, c client.Client, gvr schema.GroupVersionResource, namespace string) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: gvr.Group, Resource: gvr.Resource},
		}}
		if err := c.Create(ctx, review); err != nil {
			return false, fmt.Errorf("asking whether the manager may %s %s: %w", verb, gvr.GroupResource(), err)
		}
		if !review.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}

// setupScaleWorkloads registers a translator for each kind with a scale
// subresource the manager may watch, reading them through a cache of their
// own that keeps only their metadata and pod-template metadata. Kinds it
// may not watch are logged with the grant they need.
func setupScaleWorkloads(ctx context.Context, mgr ctrl.Manager, cfg setup.Config, kinds *Kinds) ([]ScaleWorkload, error) {
	logger := log.FromContext(ctx).WithName("burst-translator")
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("creating a discovery client: %w", err)
	}
	found, err := DiscoverScaleWorkloads(ctx, dc)
	if err != nil {
		return nil, err
	}
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	var allowed []ScaleWorkload
	for _, w := range found {
		ok, err := mayWatch(ctx, direct, w.GroupVersion().WithResource(w.Resource), cfg.WatchNamespace)
		if err != nil {
			return nil, err
		}
		if !ok {
			logger.Info("Not translating AUTO_SCALE_EKS/LOCAL_REPLICAS of a kind with a scale subresource: the manager may not list and watch it (Helm: burstPolicy.scaleWorkloads)",
				"kind", w.GroupKind().String(), "resource", w.Resource)
			continue
		}
		allowed = append(allowed, w)
	}
	if len(allowed) == 0 {
		return nil, nil
	}
	opts := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), DefaultTransform: keepTemplateMetadata}
	if cfg.WatchNamespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{cfg.WatchNamespace: {}}
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the cache of workloads with a scale subresource: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the cache of workloads with a scale subresource: %w", err)
	}
	for _, w := range allowed {
		kinds.add(w.GroupKind())
		t := &WorkloadTranslator{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("burstpolicy-translator"), GVK: w.GroupVersionKind, Reader: c, Kinds: kinds}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(w.GroupVersionKind)
		name := strings.ToLower(w.Kind + "." + w.Group)
		if w.Group == "" {
			name = strings.ToLower(w.Kind)
		}
		if err := ctrl.NewControllerManagedBy(mgr).Named(name+"-burst-translator").
			WatchesRawSource(source.Kind(c, u, &handler.TypedEnqueueRequestForObject[*unstructured.Unstructured]{},
				predicate.Or[*unstructured.Unstructured](predicate.TypedGenerationChangedPredicate[*unstructured.Unstructured]{}, predicate.TypedAnnotationChangedPredicate[*unstructured.Unstructured]{}))).
			Watches(&schedulingv1alpha1.BurstPolicy{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), u, handler.OnlyControllerOwner())).
			Complete(t); err != nil {
			return nil, fmt.Errorf("building the %s burst translator: %w", w.GroupKind(), err)
		}
		logger.Info("Translating AUTO_SCALE_EKS/LOCAL_REPLICAS of a kind with a scale subresource", "kind", w.GroupKind().String(), "version", w.Version)
	}
	return allowed, nil
}

// keepTemplateMetadata keeps of a workload read as unstructured only what
// the translator reads: its type, metadata (without managedFields) and the
// pod template's metadata.
func keepTemplateMetadata(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	meta, _, _ := unstructured.NestedMap(u.Object, "metadata")
	delete(meta, "managedFields")
	slim := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": meta}
	if tm, ok, _ := unstructured.NestedMap(u.Object, "spec", "template", "metadata"); ok {
		slim["spec"] = map[string]any{"template": map[string]any{"metadata": tm}}
	}
	u.Object = slim
	return u, nil
}
