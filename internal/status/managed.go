package status

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Managed is a cloud-backed kind reconciled by crossplane-runtime's managed
// reconciler: its status embeds crossplane's ManagedResourceStatus
// (ConditionedStatus and ObservedStatus), whose methods satisfy this.
type Managed interface {
	metav1.Object
	resource.Conditioned
	resource.ReconciliationObserver
}

// ObserveManagedGeneration records in status.observedGeneration that the
// cloud side has been observed for the current spec. crossplane-runtime's
// managed reconciler stamps each condition's observedGeneration but never
// status.observedGeneration, which kstatus, Argo CD and printer columns read.
// Call it from ExternalClient.Observe once the cloud object has been read
// (exists or not); the reconciler writes status after Observe. It reports
// whether the value changed.
func ObserveManagedGeneration(mg Managed) bool {
	if mg.GetObservedGeneration() == mg.GetGeneration() {
		return false
	}
	mg.SetObservedGeneration(mg.GetGeneration())
	return true
}
