package ingressdaemonset

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// inSync remembers the Deployments a pass found holding every field the
// controller owns (syncDeployment had nothing to apply), by the version of
// the Deployment and of the IngressDaemonSet's spec it compared: until
// either changes, the comparison gives the same answer. It converts both
// objects to unstructured form, and was half of a pass's CPU with 50 nodes,
// where all but the few nodes in the rollout change neither between passes.
// A restarted process starts empty and compares everything once.
type inSync struct {
	once sync.Once
	lru  *lru.Cache
}

// syncedVersion is what a remembered comparison saw: a Deployment (its UID
// and resourceVersion) against an IngressDaemonSet's spec (its UID and
// generation; the revision is its template's hash).
type syncedVersion struct {
	uid             types.UID
	resourceVersion string
	owner           types.UID
	generation      int64
}

func versionOf(ids *appsv1alpha1.IngressDaemonSet, d *appsv1.Deployment) syncedVersion {
	return syncedVersion{uid: d.UID, resourceVersion: d.ResourceVersion, owner: ids.UID, generation: ids.Generation}
}

func (s *inSync) cache() *lru.Cache {
	s.once.Do(func() { s.lru = lru.New(maxExpectations) })
	return s.lru
}

// known reports whether d, at its version, was found in sync with ids's
// spec at its generation.
func (s *inSync) known(ids *appsv1alpha1.IngressDaemonSet, d *appsv1.Deployment) bool {
	if d.ResourceVersion == "" || ids.Generation == 0 {
		return false
	}
	v, ok := s.cache().Get(types.NamespacedName{Namespace: d.Namespace, Name: d.Name})
	return ok && v.(syncedVersion) == versionOf(ids, d)
}

// remember records that d, at its version, is in sync with ids's spec.
func (s *inSync) remember(ids *appsv1alpha1.IngressDaemonSet, d *appsv1.Deployment) {
	if d.ResourceVersion == "" || ids.Generation == 0 {
		return
	}
	s.cache().Add(types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, versionOf(ids, d))
}
