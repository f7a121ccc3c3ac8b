// Package status builds `kubectl edgeplane status`: one table over every
// edgeplane object the API server serves, with its Ready condition, why it
// is not Ready, and a per-kind detail (pool usage, bound IP, target).
//
// Objects are read as unstructured, so the plugin depends on no kind's Go
// type: the kinds are the API server's resources in the "edgeplane"
// category, and the table below only adds a detail column for the kinds it
// knows. A kind whose CRD is not installed is simply absent.
package status

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Category is the CRD category every edgeplane kind is in (`kubectl get
// edgeplane`).
const Category = "edgeplane"

// Kind is one known kind: where it is served and what its detail column
// shows.
type Kind struct {
	Kind     string
	Resource schema.GroupVersionResource
	// Detail summarises the object for the DETAIL column; nil shows nothing.
	Detail func(u *unstructured.Unstructured) string
}

var (
	cloudGV      = schema.GroupVersion{Group: "cloud.edgeplane.io", Version: "v1alpha1"}
	schedulingGV = schema.GroupVersion{Group: "scheduling.edgeplane.io", Version: "v1alpha1"}
	appsGV       = schema.GroupVersion{Group: "apps.edgeplane.io", Version: "v1alpha1"}
	networkingGV = schema.GroupVersion{Group: "networking.edgeplane.io", Version: "v1alpha1"}
)

// Kinds are the kinds with a detail column, in table order. Adding a kind
// is one entry.
func Kinds() []Kind {
	return []Kind{
		{Kind: "ClusterProviderConfig", Resource: cloudGV.WithResource("clusterproviderconfigs"), Detail: providerConfigDetail},
		{Kind: "ProviderConfig", Resource: cloudGV.WithResource("providerconfigs"), Detail: providerConfigDetail},
		{Kind: "ClusterBurstPolicy", Resource: schedulingGV.WithResource("clusterburstpolicies"), Detail: clusterBurstPolicyDetail},
		{Kind: "BurstPolicy", Resource: schedulingGV.WithResource("burstpolicies"), Detail: burstPolicyDetail},
		{Kind: "IngressDaemonSet", Resource: appsGV.WithResource("ingressdaemonsets"), Detail: ingressDaemonSetDetail},
		{Kind: "FloatIPPool", Resource: networkingGV.WithResource("floatippools"), Detail: floatIPPoolDetail},
		{Kind: "FloatIP", Resource: networkingGV.WithResource("floatips"), Detail: floatIPDetail},
		{Kind: "PodElasticIP", Resource: networkingGV.WithResource("podelasticips"), Detail: podElasticIPDetail},
		{Kind: "AnycastIPBinding", Resource: networkingGV.WithResource("anycastipbindings"), Detail: anycastIPBindingDetail},
		{Kind: "NodeElasticIP", Resource: networkingGV.WithResource("nodeelasticips"), Detail: nodeElasticIPDetail},
	}
}

func str(u *unstructured.Unstructured, fields ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func num(u *unstructured.Unstructured, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case int:
		return int64(v)
	}
	return 0
}

// join drops empty parts.
func join(sep string, parts ...string) string {
	out := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func providerConfigDetail(u *unstructured.Unstructured) string {
	users := ""
	if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "users"); ok {
		users = fmt.Sprintf("%d users", num(u, "status", "users"))
		if num(u, "status", "users") == 1 {
			users = "1 user"
		}
	}
	return join(", ", join(" ", str(u, "spec", "provider"), str(u, "spec", "region")), users)
}

func clusterBurstPolicyDetail(u *unstructured.Unstructured) string {
	detail := "bursting off"
	switch v, ok, _ := unstructured.NestedBool(u.Object, "spec", "enabled"); {
	case !ok:
		detail = "bursting on (default)"
	case v:
		detail = "bursting on"
	}
	if str(u, "spec", "governs") != "AllPods" {
		return detail
	}
	detail += ", every pod governed"
	if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "burstPods"); !ok {
		return detail
	}
	return fmt.Sprintf("%s: %d burst, %d refused", detail, num(u, "status", "burstPods"), num(u, "status", "nonBurstablePods"))
}

func burstPolicyDetail(u *unstructured.Unstructured) string {
	target := str(u, "status", "target")
	if target == "" {
		target = join("/", str(u, "spec", "targetRef", "kind"), str(u, "spec", "targetRef", "name"))
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "localReplicas"); !ok {
		return target
	}
	return fmt.Sprintf("%s: %d local, %d burst, %d pending", target,
		num(u, "status", "localReplicas"), num(u, "status", "burstReplicas"), num(u, "status", "pendingReplicas"))
}

func ingressDaemonSetDetail(u *unstructured.Unstructured) string {
	per := num(u, "status", "replicasPerNode")
	if per == 0 {
		per = num(u, "spec", "replicasPerNode")
	}
	return fmt.Sprintf("%d/%d nodes ready, %d updated, %d per node",
		num(u, "status", "readyNodes"), num(u, "status", "desiredNodes"), num(u, "status", "updatedNodes"), per)
}

func floatIPPoolDetail(u *unstructured.Unstructured) string {
	if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "total"); !ok {
		return ""
	}
	return fmt.Sprintf("%d/%d available, %d allocated, %d reserved",
		num(u, "status", "available"), num(u, "status", "total"), num(u, "status", "allocated"), num(u, "status", "reserved"))
}

func floatIPDetail(u *unstructured.Unstructured) string {
	ip, pool := str(u, "spec", "ip"), str(u, "spec", "pool")
	phase := str(u, "status", "phase")
	pod := join("/", str(u, "status", "podNamespace"), str(u, "status", "podName"))
	switch {
	case pod != "":
		return join(" ", ip, "→", pod, on(str(u, "status", "nodeName")), "(pool "+pool+")")
	case phase != "":
		return fmt.Sprintf("%s %s (pool %s)", ip, strings.ToLower(phase), pool)
	default:
		return fmt.Sprintf("%s (pool %s)", ip, pool)
	}
}

func on(node string) string {
	if node == "" {
		return ""
	}
	return "on " + node
}

func podElasticIPDetail(u *unstructured.Unstructured) string {
	pod := join("/", u.GetNamespace(), str(u, "spec", "podName"))
	ip := str(u, "status", "publicIP")
	detail := "pod " + pod + ": no address yet"
	if ip != "" {
		detail = join(" ", ip, "→", "pod "+pod, on(str(u, "status", "nodeName")))
	}
	// Tencent Cloud's provider block says what is (or will be) allocated.
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "tencent"); ok {
		bw := ""
		if n := num(u, "spec", "tencent", "internetMaxBandwidthOut"); n > 0 {
			bw = fmt.Sprintf("%d Mbps", n)
		}
		detail += " (" + join(", ", join(" ", "Tencent", str(u, "spec", "tencent", "addressType")), bw) + ")"
	}
	return detail
}

func anycastIPBindingDetail(u *unstructured.Unstructured) string {
	node := "node " + str(u, "spec", "nodeName")
	ip := str(u, "status", "publicIP")
	if ip == "" {
		return node + ": no address yet"
	}
	inst := str(u, "status", "instanceID")
	if inst != "" {
		inst = "(" + inst + ")"
	}
	return join(" ", ip, "→", node, inst, str(u, "status", "addressType"))
}

func nodeElasticIPDetail(u *unstructured.Unstructured) string {
	node := "node " + str(u, "spec", "nodeName")
	mode := str(u, "spec", "allocation", "mode")
	ip := str(u, "status", "publicIP")
	if ip == "" {
		return join(" ", node+": no address yet", paren(mode))
	}
	inst := str(u, "status", "instanceID")
	if inst != "" {
		inst = "(" + inst + ")"
	}
	return join(" ", ip, "→", node, inst, mode)
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}
