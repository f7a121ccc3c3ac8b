package providerconfig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
)

// A config that managed resources use holds its credentials Secret with a
// finalizer of its own, so that deleting the Secret — as a namespace's
// deletion does, in no particular order — waits until the last resource
// has let go of its cloud object with those credentials. The Secrets held
// are recorded in the config's status before the finalizer is added and
// dropped after it is removed, so a Secret the config stops naming is let
// go too. Everything else of the Secret is left alone (and a
// ValidatingAdmissionPolicy refuses any other change the manager might
// make to it).

// Event reasons.
const (
	reasonCredentialsProtected = "CredentialsProtected"
	reasonCredentialsReleased  = "CredentialsReleased"
	reasonCannotProtect        = "CannotProtectCredentials"
)

// finalizerNameMax is the longest name part of a finalizer (a qualified
// name); finalizerHashBytes of a hash stand for the cut-off rest.
const (
	finalizerNameMax   = 63
	finalizerHashBytes = 4
)

// CredentialsFinalizer is the finalizer a config of kind (ProviderConfig or
// ClusterProviderConfig) named name puts on its credentials Secret:
// <kind in lower case>.cloud.edgeplane.io/<name>. A name longer than a
// finalizer's name part may be is cut and suffixed with a hash of the
// whole name.
func CredentialsFinalizer(kind, name string) string {
	if len(name) > finalizerNameMax {
		sum := sha256.Sum256([]byte(name))
		suffix := "-" + hex.EncodeToString(sum[:finalizerHashBytes])
		name = strings.TrimRight(name[:finalizerNameMax-len(suffix)], "-.") + suffix
	}
	return strings.ToLower(kind) + "." + cloudv1alpha1.CredentialsFinalizerDomain + "/" + name
}

// protection is what a pass decided about the config's credentials Secret.
type protection struct {
	// want is the Secret to hold (nil: none), with the copy read this pass.
	want    *types.NamespacedName
	wantObj *corev1.Secret
}

// wantProtection says which Secret the config should hold: the one it
// uses, while managed resources use the config and the Secret could be
// read. A config that breaks the tenant rules is never used, so it holds
// nothing.
func wantProtection(v view, secret secretState, inUse bool) protection {
	if !inUse || v.notAllowed != nil || v.source != cloudv1alpha1.CredentialsSecret || v.secret == nil || secret.obj == nil {
		return protection{}
	}
	return protection{want: v.secret, wantObj: secret.obj}
}

func refOf(n types.NamespacedName) cloudv1alpha1.SecretReference {
	return cloudv1alpha1.SecretReference{Namespace: n.Namespace, Name: n.Name}
}

// releaseUnwanted removes the config's finalizer from every recorded Secret
// but the wanted one, and drops them from obj's record (written with the
// status).
func (r *Reconciler) releaseUnwanted(ctx context.Context, obj config, p protection) error {
	fin := CredentialsFinalizer(viewOf(obj).kind, obj.GetName())
	st := viewOf(obj).status
	keep := st.ProtectedSecrets[:0:0]
	for _, ref := range st.ProtectedSecrets {
		key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		if p.want != nil && key == *p.want {
			keep = append(keep, ref)
			continue
		}
		s := &corev1.Secret{}
		err := r.reader.Get(ctx, key, s)
		if err == nil {
			err = r.setSecretFinalizer(ctx, s, fin, false)
		}
		if err := client.IgnoreNotFound(err); err != nil {
			return fmt.Errorf("releasing credentials Secret %s: %w", key, err)
		}
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, reasonCredentialsReleased, "ReleaseCredentials",
			"Secret %s no longer held: no managed resource needs it through this config", key)
		log.FromContext(ctx).Info("Released credentials Secret", "secret", key)
	}
	st.ProtectedSecrets = keep
	return nil
}

// recordWanted adds the wanted Secret to obj's record; it reports whether
// the record grew (the status must be written before the finalizer is
// added).
func recordWanted(obj config, p protection) bool {
	if p.want == nil {
		return false
	}
	st := viewOf(obj).status
	if slices.Contains(st.ProtectedSecrets, refOf(*p.want)) {
		return false
	}
	st.ProtectedSecrets = append(st.ProtectedSecrets, refOf(*p.want))
	return true
}

// holdWanted adds the config's finalizer to the wanted Secret, recorded in
// the stored status by now. A Secret already being deleted cannot take a
// new finalizer: the config reports it and its resources' deletions may
// not reach the cloud.
func (r *Reconciler) holdWanted(ctx context.Context, obj config, p protection) error {
	if p.want == nil {
		return nil
	}
	fin := CredentialsFinalizer(viewOf(obj).kind, obj.GetName())
	if controllerutil.ContainsFinalizer(p.wantObj, fin) {
		return nil
	}
	if p.wantObj.DeletionTimestamp != nil {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reasonCannotProtect, "ProtectCredentials",
			"Secret %s is being deleted while managed resources use this config; their deletion needs it", *p.want)
		return nil
	}
	if err := r.setSecretFinalizer(ctx, p.wantObj, fin, true); err != nil {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reasonCannotProtect, "ProtectCredentials",
			"Cannot hold Secret %s while managed resources use this config: %v", *p.want, err)
		return fmt.Errorf("holding credentials Secret %s: %w", *p.want, err)
	}
	r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, reasonCredentialsProtected, "ProtectCredentials",
		"Secret %s held with finalizer %s while managed resources use this config", *p.want, fin)
	return nil
}

// setSecretFinalizer adds or removes fin on s (as read) with a merge patch
// of the finalizers alone, with an optimistic lock; a conflict is retried
// on the next pass.
func (r *Reconciler) setSecretFinalizer(ctx context.Context, s *corev1.Secret, fin string, hold bool) error {
	before := s.DeepCopy()
	changed := false
	if hold {
		changed = controllerutil.AddFinalizer(s, fin)
	} else {
		changed = controllerutil.RemoveFinalizer(s, fin)
	}
	if !changed {
		return nil
	}
	if err := r.client.Patch(ctx, s, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) && !hold {
			return nil
		}
		return err
	}
	return nil
}
