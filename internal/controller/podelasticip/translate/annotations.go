// Package translate parses aws-pod-eip-controller's pod annotations into a
// PodElasticIP allocation and computes the pod labels that controller wrote.
// It is pure and fuzzed: bad input yields an Invalid reason, never a panic.
package translate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// The legacy pod annotations (aws-pod-eip-controller pkg/config.go).
const (
	// Type enables the legacy controller: auto, fixed-tag or fixed-tag-value.
	Type = "aws-samples.github.com/aws-pod-eip-controller-type"
	// PublicIPv4Pool is the pool for auto (empty: amazon).
	PublicIPv4Pool = "aws-samples.github.com/aws-pod-eip-controller-public-ipv4-pool"
	// FixedTag is the pool's tag key for fixed-tag.
	FixedTag = "aws-samples.github.com/aws-pod-eip-controller-fixed-tag"
	// FixedTagValue is the tag key whose value is <namespace>/<pod> for
	// fixed-tag-value.
	FixedTagValue = "aws-samples.github.com/aws-pod-eip-controller-fixed-tag-value"
)

// Legacy type values.
const (
	TypeAuto          = "auto"
	TypeFixedTag      = "fixed-tag"
	TypeFixedTagValue = "fixed-tag-value"
)

// The legacy pod labels (written by the legacy controller after a success;
// an initContainer may wait for LabelPublicIP through the downward API).
const (
	LabelPublicIP      = "aws-pod-eip-controller-public-ip"
	LabelType          = "aws-pod-eip-controller-type"
	LabelPool          = "aws-pod-eip-controller-public-ipv4-pool"
	LabelFixedTag      = "aws-pod-eip-controller-fixed-tag"
	LabelFixedTagValue = "aws-pod-eip-controller-fixed-tag-value"
)

// AllLabels lists every legacy label, for removal.
var AllLabels = []string{LabelPublicIP, LabelType, LabelPool, LabelFixedTag, LabelFixedTagValue}

// Desired is what a pod's annotations ask for.
type Desired struct {
	// Present: the pod carries the type annotation.
	Present bool
	// Allocation is the PodElasticIP allocation; with Invalid set it is a
	// placeholder (mode Auto) that the API accepts.
	Allocation networkingv1alpha1.PodElasticIPAllocation
	// Invalid says why the annotations cannot be used; empty when they can.
	Invalid string
}

// Parse reads the legacy annotations of a pod.
func Parse(ann map[string]string) Desired {
	typ, ok := ann[Type]
	if !ok {
		return Desired{}
	}
	d := Desired{Present: true, Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto}}
	switch strings.TrimSpace(typ) {
	case TypeAuto:
		pool := strings.TrimSpace(ann[PublicIPv4Pool])
		if err := checkPool(pool); err != "" {
			return invalid(d, fmt.Sprintf("annotation %s: %s", PublicIPv4Pool, err))
		}
		d.Allocation.PublicIPv4Pool = pool
	case TypeFixedTag:
		key := strings.TrimSpace(ann[FixedTag])
		if key == "" {
			return invalid(d, fmt.Sprintf("type fixed-tag needs the tag key of the address pool in annotation %s", FixedTag))
		}
		if err := CheckTagKey(key); err != "" {
			return invalid(d, fmt.Sprintf("annotation %s: %s", FixedTag, err))
		}
		d.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: key}
	case TypeFixedTagValue:
		key := strings.TrimSpace(ann[FixedTagValue])
		if key == "" {
			msg := fmt.Sprintf("type fixed-tag-value needs, in annotation %s, the tag key whose value is <namespace>/<pod>", FixedTagValue)
			if strings.TrimSpace(ann[FixedTag]) != "" {
				msg += fmt.Sprintf(" (the key is in %s, which only fixed-tag reads)", FixedTag)
			}
			return invalid(d, msg)
		}
		if err := CheckTagKey(key); err != "" {
			return invalid(d, fmt.Sprintf("annotation %s: %s", FixedTagValue, err))
		}
		d.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: key}
	default:
		return invalid(d, fmt.Sprintf("annotation %s has unknown value %q: want %s, %s or %s",
			Type, truncate(typ, 64), TypeAuto, TypeFixedTag, TypeFixedTagValue))
	}
	return d
}

func invalid(d Desired, why string) Desired {
	d.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto}
	d.Invalid = why
	return d
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// checkPool mirrors the API's rules for publicIPv4Pool.
func checkPool(pool string) string {
	if len(pool) > 64 {
		return "a public IPv4 pool ID has at most 64 characters"
	}
	for _, r := range pool {
		if r < 0x21 || r > 0x7e {
			return "a public IPv4 pool ID is printable ASCII without spaces"
		}
	}
	return ""
}

// CheckTagKey mirrors the API's rules for allocation.tagKey; "" when valid.
func CheckTagKey(key string) string {
	switch {
	case len(key) > 127:
		return "a tag key has at most 127 characters"
	case strings.HasPrefix(strings.ToLower(key), "aws:"):
		return "tag keys starting with aws: are reserved by AWS"
	case strings.HasPrefix(key, "edgeplane.io/") || strings.HasPrefix(key, "networking.edgeplane.io/"):
		return "tag keys starting with edgeplane.io/ are edgeplane's own"
	}
	return ""
}

// TypeOf is the legacy type value of a mode.
func TypeOf(m networkingv1alpha1.PodElasticIPAllocationMode) string {
	switch m {
	case networkingv1alpha1.PodElasticIPModePool:
		return TypeFixedTag
	case networkingv1alpha1.PodElasticIPModeStatic:
		return TypeFixedTagValue
	default:
		return TypeAuto
	}
}

// Labels returns the legacy labels for a pod whose address publicIP is
// associated. Values that are not valid label values (a tag key with "/"
// or ":", which broke the legacy controller's label patch) are left out.
func Labels(a networkingv1alpha1.PodElasticIPAllocation, publicIP string) map[string]string {
	out := map[string]string{LabelPublicIP: publicIP, LabelType: TypeOf(a.Mode)}
	switch a.Mode {
	case networkingv1alpha1.PodElasticIPModePool:
		out[LabelFixedTag] = a.TagKey
	case networkingv1alpha1.PodElasticIPModeStatic:
		if a.TagKey != "" {
			out[LabelFixedTagValue] = a.TagKey
		}
	default:
		if a.PublicIPv4Pool != "" {
			out[LabelPool] = a.PublicIPv4Pool
		}
	}
	for k, v := range out {
		if len(validation.IsValidLabelValue(v)) > 0 {
			delete(out, k)
		}
	}
	return out
}
