// Package translate turns the legacy TKE resilience inputs into edgeplane
// objects: the annotations AUTO_SCALE_EKS and LOCAL_REPLICAS on the pod
// template of a Deployment, StatefulSet, ReplicaSet, Job (a CronJob's
// through its Jobs) or any kind with a scale subresource, or on a bare Pod,
// become a BurstPolicy owned by that workload, and the eks-config
// ConfigMap's AUTO_SCALE_EKS becomes the ClusterBurstPolicy "default". The
// translators never touch objects a person made (see internal/translator).
package translate

import (
	"fmt"
	"strings"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
)

// Legacy names.
const (
	// AnnotationAutoScaleEKS is the local switch on a pod template, and the
	// key of the global switch in the eks-config ConfigMap.
	AnnotationAutoScaleEKS = "AUTO_SCALE_EKS"
	// AnnotationLocalReplicas is the local floor on a pod template.
	AnnotationLocalReplicas = "LOCAL_REPLICAS"
	// EKSConfigName is the legacy global switch's ConfigMap.
	EKSConfigName = "eks-config"
	// DefaultEKSConfigNamespace is where the chart put eks-config.
	DefaultEKSConfigNamespace = "kube-system"
	// LegacySchedulerName is the chart's scheduler, which workloads on
	// community Kubernetes had to name in their schedulerName.
	LegacySchedulerName = "tke-scheduler"
)

// maxNameLength bounds generated object names.
const maxNameLength = 253

// PolicyName is the name of the BurstPolicy translated from a workload.
func PolicyName(kind, name string) string {
	n := strings.ToLower(kind) + "-" + name
	if len(n) > maxNameLength {
		n = strings.TrimRight(n[:maxNameLength], "-.")
	}
	return n
}

// HasLegacyAnnotations reports whether a pod template carries either legacy key.
func HasLegacyAnnotations(ann map[string]string) bool {
	_, a := ann[AnnotationAutoScaleEKS]
	_, l := ann[AnnotationLocalReplicas]
	return a || l
}

// PolicySpec translates a workload's pod-template annotations into a
// BurstPolicy spec. Values that cannot be parsed are reported in problems
// and treated as unset.
//
// LOCAL_REPLICAS set → trigger Pending (every pending replica beyond the floor
// bursts at once, as the legacy controller did once N replicas existed);
// otherwise trigger Unschedulable with burstAfter 0 (pending pods burst as
// soon as the scheduler finds no room locally).
func PolicySpec(apiVersion, kind, name string, ann map[string]string) (spec schedulingv1alpha1.BurstPolicySpec, problems []string) {
	spec = schedulingv1alpha1.BurstPolicySpec{
		TargetRef:    &schedulingv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: name},
		Trigger:      schedulingv1alpha1.TriggerUnschedulable,
		VirtualNodes: schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS},
		ScaleIn:      schedulingv1alpha1.ScaleInBurstFirst,
	}
	if v, ok := ann[AnnotationAutoScaleEKS]; ok {
		b, err := decide.ParseSwitch(v)
		if err != nil {
			problems = append(problems, err.Error())
		}
		spec.Enabled = b
	}
	if v, ok := ann[AnnotationLocalReplicas]; ok {
		n, err := decide.ParseLocalReplicas(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%v; no local floor is kept", err))
		} else {
			spec.LocalReplicas = n
			spec.Trigger = schedulingv1alpha1.TriggerPending
		}
	}
	return spec, problems
}
