package cniipam

import (
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The CNI_ARGS keys container runtimes set for a Kubernetes pod.
const (
	argPodNamespace = "K8S_POD_NAMESPACE"
	argPodName      = "K8S_POD_NAME"
	argPodUID       = "K8S_POD_UID"
	maxArgs         = 4096
)

// PodRef is the pod a CNI call is for.
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// ParseArgs reads CNI_ARGS ("K=V;K=V"). The pod's namespace, name and UID
// are required: without the UID a recreated pod of the same name could be
// handed the old pod's IP. Other keys (IgnoreUnknown,
// K8S_POD_INFRA_CONTAINER_ID, ...) are the runtime's and ignored.
func ParseArgs(s string) (PodRef, error) {
	if len(s) > maxArgs {
		return PodRef{}, fmt.Errorf("CNI_ARGS is %d bytes long, at most %d are allowed", len(s), maxArgs)
	}
	var ref PodRef
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(s, ";") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return PodRef{}, fmt.Errorf("CNI_ARGS: %q is not KEY=VALUE", pair)
		}
		switch k {
		case argPodNamespace, argPodName, argPodUID:
		default:
			continue
		}
		if seen[k] {
			return PodRef{}, fmt.Errorf("CNI_ARGS: %s is given twice", k)
		}
		seen[k] = true
		switch k {
		case argPodNamespace:
			ref.Namespace = v
		case argPodName:
			ref.Name = v
		case argPodUID:
			ref.UID = types.UID(v)
		}
	}
	if msgs := validation.IsDNS1123Label(ref.Namespace); len(msgs) > 0 {
		return PodRef{}, fmt.Errorf("CNI_ARGS: %s=%q is not a namespace name (is this a Kubernetes pod?)", argPodNamespace, ref.Namespace)
	}
	if msgs := validation.IsDNS1123Subdomain(ref.Name); len(msgs) > 0 {
		return PodRef{}, fmt.Errorf("CNI_ARGS: %s=%q is not a pod name", argPodName, ref.Name)
	}
	if ref.UID == "" || len(ref.UID) > 128 || strings.ContainsFunc(string(ref.UID), func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) {
		return PodRef{}, fmt.Errorf("CNI_ARGS: %s=%q is missing or not a UID (the runtime must pass the pod's UID)", argPodUID, ref.UID)
	}
	return ref, nil
}
