package why

import (
	"context"
	"fmt"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/plugin/orphans"
	"github.com/edgeplane/edgeplane/internal/plugin/status"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// maxEvents is how many recent Events a verdict shows.
const maxEvents = 5

// Gatherer reads what governs an object.
type Gatherer struct {
	Client client.Client
	// ClusterName is the cluster identity of configs that set none (empty:
	// the kube-system namespace's UID), to find addresses in the cloud.
	ClusterName string
	// TenantEndpoints are the manager's --tenant-endpoints.
	TenantEndpoints []string
	// Cloud turns the cloud lookup on; it needs the provider config's
	// credentials (read access to its Secret).
	Cloud bool
}

// Target is what to explain: a pod, a node, or an edgeplane object.
type Target struct {
	// Kind is "Pod", "Node", an edgeplane kind, or "" (try a pod, then a
	// node, then every edgeplane kind, by name).
	Kind      string
	Namespace string
	Name      string
}

// kindAliases maps what a person may type to a kind.
var kindAliases = map[string]string{
	"pod": "Pod", "pods": "Pod", "po": "Pod",
	"node": "Node", "nodes": "Node", "no": "Node",
	"podelasticip": kindPodElasticIP, "podelasticips": kindPodElasticIP, "peip": kindPodElasticIP,
	"anycastipbinding": kindAnycastIPBinding, "anycastipbindings": kindAnycastIPBinding, "aipb": kindAnycastIPBinding,
	"nodeelasticip": kindNodeElasticIP, "nodeelasticips": kindNodeElasticIP, "neip": kindNodeElasticIP,
	"floatippool": kindFloatIPPool, "floatippools": kindFloatIPPool, "fipp": kindFloatIPPool,
	"floatip": kindFloatIP, "floatips": kindFloatIP, "fip": kindFloatIP,
	"ingressdaemonset": kindIngressDaemonSet, "ingressdaemonsets": kindIngressDaemonSet, "ids": kindIngressDaemonSet,
	"burstpolicy": kindBurstPolicy, "burstpolicies": kindBurstPolicy, "bp": kindBurstPolicy,
	"clusterburstpolicy": "ClusterBurstPolicy", "clusterburstpolicies": "ClusterBurstPolicy", "cbp": "ClusterBurstPolicy",
	"clusterproviderconfig": "ClusterProviderConfig", "clusterproviderconfigs": "ClusterProviderConfig", "cpc": "ClusterProviderConfig",
	"providerconfig": "ProviderConfig", "providerconfigs": "ProviderConfig", "pc": "ProviderConfig",
}

// ParseTarget reads `TYPE/NAME` or `NAME`.
func ParseTarget(arg, namespace string) (Target, error) {
	typ, name, found := strings.Cut(arg, "/")
	if !found {
		return Target{Namespace: namespace, Name: arg}, nil
	}
	if name == "" {
		return Target{}, fmt.Errorf("%q names no object", arg)
	}
	kind, ok := kindAliases[strings.ToLower(strings.SplitN(typ, ".", 2)[0])]
	if !ok {
		return Target{}, fmt.Errorf("unknown kind %q: want pod, node or an edgeplane kind (peip, aipb, neip, fipp, fip, ids, bp, cbp, cpc, pc)", typ)
	}
	return Target{Kind: kind, Namespace: namespace, Name: name}, nil
}

// newObject returns an empty object of an edgeplane kind, and whether the
// kind is namespaced.
func newObject(kind string) (client.Object, bool) {
	switch kind {
	case kindPodElasticIP:
		return &networkingv1alpha1.PodElasticIP{}, true
	case kindAnycastIPBinding:
		return &networkingv1alpha1.AnycastIPBinding{}, false
	case kindNodeElasticIP:
		return &networkingv1alpha1.NodeElasticIP{}, false
	case kindFloatIPPool:
		return &networkingv1alpha1.FloatIPPool{}, false
	case kindFloatIP:
		return &networkingv1alpha1.FloatIP{}, false
	case kindIngressDaemonSet:
		return &appsv1alpha1.IngressDaemonSet{}, true
	case kindBurstPolicy:
		return &schedulingv1alpha1.BurstPolicy{}, true
	case "ClusterBurstPolicy":
		return &schedulingv1alpha1.ClusterBurstPolicy{}, false
	case "ClusterProviderConfig":
		return &cloudv1alpha1.ClusterProviderConfig{}, false
	case "ProviderConfig":
		return &cloudv1alpha1.ProviderConfig{}, true
	}
	return nil, false
}

// edgeplaneKinds is the order a bare name is looked up in.
var edgeplaneKinds = []string{kindPodElasticIP, kindAnycastIPBinding, kindNodeElasticIP, kindIngressDaemonSet, kindBurstPolicy, kindFloatIPPool, kindFloatIP,
	"ClusterBurstPolicy", "ClusterProviderConfig", "ProviderConfig"}

// Gather reads the facts about t.
func (g *Gatherer) Gather(ctx context.Context, t Target) (Facts, error) {
	switch t.Kind {
	case "Pod":
		return g.pod(ctx, t)
	case "Node":
		return g.node(ctx, t)
	case "":
		f, err := g.pod(ctx, t)
		if !apierrors.IsNotFound(err) {
			return f, err
		}
		if f, err = g.node(ctx, t); !apierrors.IsNotFound(err) {
			return f, err
		}
		var found []Facts
		for _, k := range edgeplaneKinds {
			f, err := g.object(ctx, Target{Kind: k, Namespace: t.Namespace, Name: t.Name})
			switch {
			case err == nil:
				found = append(found, f)
			case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
				return Facts{}, err
			}
		}
		switch len(found) {
		case 0:
			return Facts{}, fmt.Errorf("no pod, node or edgeplane object named %q (namespace %q)", t.Name, t.Namespace)
		case 1:
			return found[0], nil
		}
		var names []string
		for _, f := range found {
			names = append(names, strings.ToLower(f.Object.Kind)+"/"+t.Name)
		}
		return Facts{}, fmt.Errorf("%q is ambiguous: name one of %s", t.Name, strings.Join(names, ", "))
	}
	return g.object(ctx, t)
}

// linkOf reads obj's Ready condition as `kubectl edgeplane status` does.
func linkOf(obj client.Object, kind, role string) Link {
	u := &unstructured.Unstructured{}
	if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err == nil {
		u.Object = m
	}
	var k status.Kind
	for _, sk := range status.Kinds() {
		if sk.Kind == kind {
			k = sk
		}
	}
	k.Kind = kind
	r := status.RowFor(k, u)
	return Link{Ref: Ref{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}, Role: role,
		Ready: r.Ready, Reason: r.Reason, Message: r.Message, Detail: r.Detail}
}

// config returns the Link of the provider config ref names (nil: the
// ClusterProviderConfig "default") for a resource in namespace.
func (g *Gatherer) config(ctx context.Context, ref *xpv2.ProviderConfigReference, namespace string) *Link {
	kind, name := cloudv1alpha1.ClusterProviderConfigKind, cloudv1alpha1.DefaultProviderConfigName
	if ref != nil {
		kind, name = ref.Kind, ref.Name
	}
	obj, namespaced := newObject(kind)
	if obj == nil {
		return &Link{Ref: Ref{Kind: kind, Name: name}, Role: "provider config", Ready: "Unknown", Reason: "UnknownKind", Message: "not a provider config kind"}
	}
	key := client.ObjectKey{Name: name}
	if namespaced {
		key.Namespace = namespace
	}
	if err := g.Client.Get(ctx, key, obj); err != nil {
		l := &Link{Ref: Ref{Kind: kind, Namespace: key.Namespace, Name: name}, Role: "provider config", Ready: "Unknown", Reason: "NotFound", Message: err.Error()}
		if !apierrors.IsNotFound(err) {
			l.Reason = "Unreadable"
		}
		return l
	}
	l := linkOf(obj, kind, "provider config")
	return &l
}

// events returns the newest Events on objs, at most maxEvents.
func (g *Gatherer) events(ctx context.Context, objs map[Ref]client.Object) []Event {
	type dated struct {
		Event
		at metav1.Time
	}
	var all []dated
	for ref, o := range objs {
		var list corev1.EventList
		opts := []client.ListOption{client.MatchingFields{"involvedObject.uid": string(o.GetUID())}}
		if o.GetNamespace() != "" {
			opts = append(opts, client.InNamespace(o.GetNamespace()))
		}
		if err := g.Client.List(ctx, &list, opts...); err != nil {
			continue
		}
		for _, e := range list.Items {
			at := e.LastTimestamp
			if e.EventTime.After(at.Time) {
				at = metav1.NewTime(e.EventTime.Time)
			}
			all = append(all, dated{Event: Event{Object: ref, Type: e.Type, Reason: e.Reason, Message: e.Message}, at: at})
		}
	}
	// Newest first; Warnings before Normal Events of the same moment.
	slices.SortStableFunc(all, func(a, b dated) int {
		if c := b.at.Compare(a.at.Time); c != 0 {
			return c
		}
		return strings.Compare(b.Type, a.Type)
	})
	// One Event per object, type and reason, the newest: a retried failure
	// shows once, not once per retry.
	var out []Event
	for _, d := range all {
		if !slices.ContainsFunc(out, func(e Event) bool { return e.Object == d.Object && e.Type == d.Type && e.Reason == d.Reason }) {
			out = append(out, d.Event)
		}
		if len(out) == maxEvents {
			break
		}
	}
	return out
}

func (g *Gatherer) pod(ctx context.Context, t Target) (Facts, error) {
	pod := &corev1.Pod{}
	if err := g.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, pod); err != nil {
		return Facts{}, err
	}
	ref := Ref{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}
	f := Facts{Object: ref, Pod: &PodFacts{Phase: string(pod.Status.Phase), NodeName: pod.Spec.NodeName,
		Burst: pod.Labels[schedulingv1alpha1.LabelBurst] == "true"}}
	_, f.Pod.WantsElasticIP = pod.Annotations[translate.Type]
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			f.Pod.Unschedulable = c.Message
		}
	}
	for _, gate := range pod.Spec.SchedulingGates {
		f.Pod.Gated = f.Pod.Gated || gate.Name == schedulingv1alpha1.SchedulingGateBurst
	}
	for _, c := range append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...) {
		_, req := c.Resources.Requests[networkingv1alpha1.ResourceENIIP]
		_, lim := c.Resources.Limits[networkingv1alpha1.ResourceENIIP]
		f.Pod.WantsFloatIP = f.Pod.WantsFloatIP || req || lim
	}
	objs := map[Ref]client.Object{ref: pod}

	var peips networkingv1alpha1.PodElasticIPList
	if err := g.Client.List(ctx, &peips, client.InNamespace(pod.Namespace)); err != nil && !meta.IsNoMatchError(err) {
		return Facts{}, fmt.Errorf("listing PodElasticIPs: %w", err)
	}
	for i := range peips.Items {
		p := &peips.Items[i]
		if p.Spec.PodName != pod.Name {
			continue
		}
		gov := Governor{Link: linkOf(p, kindPodElasticIP, "gives the pod its Elastic IP"), Config: g.config(ctx, p.Spec.ProviderConfigReference, p.Namespace)}
		f.Governing = append(f.Governing, gov)
		objs[gov.Ref] = p
		if f.Pod.WantsElasticIP || p.Status.AllocationID != "" {
			f.Pod.WantsElasticIP = true
		}
	}
	if f.Pod.WantsFloatIP {
		var fips networkingv1alpha1.FloatIPList
		if err := g.Client.List(ctx, &fips, client.MatchingFields{"status.podUID": string(pod.UID)}); err != nil && !meta.IsNoMatchError(err) {
			return Facts{}, fmt.Errorf("listing the pod's FloatIPs: %w", err)
		}
		for i := range fips.Items {
			fip := &fips.Items[i]
			gov := Governor{Link: linkOf(fip, kindFloatIP, "the pod's float IP")}
			f.Governing = append(f.Governing, gov)
			objs[gov.Ref] = fip
		}
		if len(fips.Items) == 0 {
			pools, err := g.candidatePools(ctx, pod)
			if err != nil {
				return Facts{}, err
			}
			f.Governing = append(f.Governing, pools...)
		}
	}
	var bps schedulingv1alpha1.BurstPolicyList
	if err := g.Client.List(ctx, &bps, client.InNamespace(pod.Namespace)); err != nil && !meta.IsNoMatchError(err) {
		return Facts{}, fmt.Errorf("listing BurstPolicies: %w", err)
	}
	for i := range bps.Items {
		bp := &bps.Items[i]
		if !selects(bp, pod) {
			continue
		}
		gov := Governor{Link: linkOf(bp, kindBurstPolicy, "places the pod (local or burst)"),
			FloorShort: meta.IsStatusConditionTrue(bp.Status.Conditions, schedulingv1alpha1.TypeLocalCapacityShort)}
		gov.Detail = fmt.Sprintf("localReplicas %d; %d local, %d burst, %d pending", bp.Spec.LocalReplicas, bp.Status.LocalReplicas, bp.Status.BurstReplicas, bp.Status.PendingReplicas)
		if c := meta.FindStatusCondition(bp.Status.Conditions, schedulingv1alpha1.TypeLocalCapacityShort); c != nil && gov.FloorShort {
			gov.Message = c.Message
		}
		for _, nb := range bp.Status.NonBurstablePods {
			if nb.Name == pod.Name {
				gov.NotBurstable = &Event{Reason: nb.Reason, Message: nb.Message}
			}
		}
		f.Governing = append(f.Governing, gov)
		objs[gov.Ref] = bp
	}
	f.Events = g.events(ctx, objs)
	return f, nil
}

// selects reports whether bp governs pod: its selector from status (the
// target's scale selector) or spec.
func selects(bp *schedulingv1alpha1.BurstPolicy, pod *corev1.Pod) bool {
	if bp.Status.Selector != "" {
		sel, err := labels.Parse(bp.Status.Selector)
		return err == nil && sel.Matches(labels.Set(pod.Labels))
	}
	if bp.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(bp.Spec.Selector)
		return err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels))
	}
	return false
}

// candidatePools are the pools a float-IP pod may take an IP from: the one
// it names, else every pool with ranges.
func (g *Gatherer) candidatePools(ctx context.Context, pod *corev1.Pod) ([]Governor, error) {
	var pools networkingv1alpha1.FloatIPPoolList
	if err := g.Client.List(ctx, &pools); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing FloatIPPools: %w", err)
	}
	named := pod.Annotations[networkingv1alpha1.AnnotationENIIPPool]
	var out []Governor
	for i := range pools.Items {
		p := &pools.Items[i]
		if named != "" && p.Name != named || named == "" && len(p.Spec.Ranges) == 0 {
			continue
		}
		available := p.Status.Available
		gov := Governor{Link: linkOf(p, kindFloatIPPool, "may give the pod a float IP"), FloatIPAvailable: &available}
		out = append(out, gov)
	}
	return out, nil
}

func (g *Gatherer) node(ctx context.Context, t Target) (Facts, error) {
	node := &corev1.Node{}
	if err := g.Client.Get(ctx, client.ObjectKey{Name: t.Name}, node); err != nil {
		return Facts{}, err
	}
	ref := Ref{Kind: "Node", Name: node.Name}
	f := Facts{Object: ref, Node: &NodeFacts{WantsAnycastIP: node.Labels[networkingv1alpha1.LegacyLabelNeedAIAIP] == "true",
		WantsElasticIP: node.Labels[networkingv1alpha1.LabelWantElasticIP] == "true"}}
	for _, taint := range node.Spec.Taints {
		f.Node.Tainted = f.Node.Tainted || taint.Key == networkingv1alpha1.LegacyTaintNoAIAIP
		f.Node.ElasticIPTainted = f.Node.ElasticIPTainted || taint.Key == networkingv1alpha1.DefaultNodeElasticIPTaintKey
	}
	objs := map[Ref]client.Object{ref: node}
	var bindings networkingv1alpha1.AnycastIPBindingList
	if err := g.Client.List(ctx, &bindings); err != nil && !meta.IsNoMatchError(err) {
		return Facts{}, fmt.Errorf("listing AnycastIPBindings: %w", err)
	}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if b.Spec.NodeName != node.Name {
			continue
		}
		gov := Governor{Link: linkOf(b, kindAnycastIPBinding, "gives the node its anycast IP"), Config: g.config(ctx, b.Spec.ProviderConfigReference, "")}
		f.Governing = append(f.Governing, gov)
		objs[gov.Ref] = b
	}
	var neips networkingv1alpha1.NodeElasticIPList
	if err := g.Client.List(ctx, &neips); err != nil && !meta.IsNoMatchError(err) {
		return Facts{}, fmt.Errorf("listing NodeElasticIPs: %w", err)
	}
	for i := range neips.Items {
		n := &neips.Items[i]
		if n.Spec.NodeName != node.Name {
			continue
		}
		gov := Governor{Link: linkOf(n, kindNodeElasticIP, "gives the node its Elastic IP"), Config: g.config(ctx, n.Spec.ProviderConfigReference, "")}
		f.Governing = append(f.Governing, gov)
		objs[gov.Ref] = n
	}
	var idss appsv1alpha1.IngressDaemonSetList
	if err := g.Client.List(ctx, &idss); err != nil && !meta.IsNoMatchError(err) {
		return Facts{}, fmt.Errorf("listing IngressDaemonSets: %w", err)
	}
	for i := range idss.Items {
		ids := &idss.Items[i]
		for _, n := range ids.Status.Nodes {
			if n.Node != node.Name {
				continue
			}
			gov := Governor{Link: linkOf(ids, kindIngressDaemonSet, "runs ingress replicas on the node"), NodePhase: string(n.Phase)}
			f.Governing = append(f.Governing, gov)
			objs[gov.Ref] = ids
		}
	}
	f.Events = g.events(ctx, objs)
	return f, nil
}

func (g *Gatherer) object(ctx context.Context, t Target) (Facts, error) {
	obj, namespaced := newObject(t.Kind)
	if obj == nil {
		return Facts{}, fmt.Errorf("unknown kind %q", t.Kind)
	}
	key := client.ObjectKey{Name: t.Name}
	if namespaced {
		key.Namespace = t.Namespace
	}
	if err := g.Client.Get(ctx, key, obj); err != nil {
		return Facts{}, err
	}
	ref := Ref{Kind: t.Kind, Namespace: key.Namespace, Name: t.Name}
	gov := Governor{Link: linkOf(obj, t.Kind, "the object asked about")}
	if m, ok := obj.(interface {
		GetProviderConfigReference() *xpv2.ProviderConfigReference
	}); ok {
		gov.Config = g.config(ctx, m.GetProviderConfigReference(), key.Namespace)
	}
	f := Facts{Object: ref, Governing: []Governor{gov}}
	f.Events = g.events(ctx, map[Ref]client.Object{ref: obj})
	return f, nil
}

// CloudState reads the cloud's view of the addresses the verdict's chain
// holds, through the provider config's own client: one line per address,
// or why it could not be read.
func (g *Gatherer) CloudState(ctx context.Context, f Facts) string {
	if !g.Cloud {
		return ""
	}
	var lines []string
	for _, gov := range f.Governing {
		id, ref, namespace := "", (*xpv2.ProviderConfigReference)(nil), ""
		switch gov.Kind {
		case kindPodElasticIP:
			p := &networkingv1alpha1.PodElasticIP{}
			if g.Client.Get(ctx, client.ObjectKey{Namespace: gov.Namespace, Name: gov.Name}, p) != nil {
				continue
			}
			id, ref, namespace = p.Status.AllocationID, p.Spec.ProviderConfigReference, p.Namespace
		case kindAnycastIPBinding:
			b := &networkingv1alpha1.AnycastIPBinding{}
			if g.Client.Get(ctx, client.ObjectKey{Name: gov.Name}, b) != nil {
				continue
			}
			id, ref = b.Status.AddressID, b.Spec.ProviderConfigReference
		case kindNodeElasticIP:
			n := &networkingv1alpha1.NodeElasticIP{}
			if g.Client.Get(ctx, client.ObjectKey{Name: gov.Name}, n) != nil {
				continue
			}
			id, ref = n.Status.AllocationID, n.Spec.ProviderConfigReference
		default:
			continue
		}
		if id == "" {
			lines = append(lines, fmt.Sprintf("%s: no address recorded yet", gov.Ref))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %s", gov.Ref, g.lookup(ctx, id, ref, namespace)))
	}
	return strings.Join(lines, "\n")
}

func (g *Gatherer) lookup(ctx context.Context, id string, ref *xpv2.ProviderConfigReference, namespace string) string {
	tenants, err := tenancy.NewPolicy(g.TenantEndpoints)
	if err != nil {
		return "not read: " + err.Error()
	}
	cluster := g.ClusterName
	if cluster == "" {
		ks := &corev1.Namespace{}
		if err := g.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ks); err == nil {
			cluster = string(ks.UID)
		}
	}
	cfg, err := providerconfig.Resolve(ctx, g.Client, ref, namespace, cluster, providerconfig.WithTenancy(tenants))
	if err != nil {
		return "not read (credentials): " + err.Error()
	}
	addrs, err := orphans.ListAddresses(ctx, cfg, cfg.ClusterIdentity)
	if err != nil {
		return "not read: " + err.Error()
	}
	for _, a := range addrs {
		if a.ID != id {
			continue
		}
		if a.AttachedTo == "" {
			return fmt.Sprintf("%s (%s) exists, not associated", a.ID, a.PublicIP)
		}
		return fmt.Sprintf("%s (%s) associated with %s", a.ID, a.PublicIP, a.AttachedTo)
	}
	return fmt.Sprintf("%s not found among this cluster's addresses in the cloud", id)
}
