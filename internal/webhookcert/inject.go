package webhookcert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// injectCABundle makes the caBundle of every named webhook configuration and
// CRD conversion webhook equal to bundle. Objects that do not exist are
// returned in missing, not as errors: they may be installed after the
// manager starts (the caller retries).
func (r *Rotator) injectCABundle(ctx context.Context, bundle []byte) (missing []string, err error) {
	var errs []error
	record := func(kind, name string, found bool, err error) {
		if !found {
			missing = append(missing, kind+"/"+name)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range r.opts.MutatingWebhookConfigurations {
		found, err := r.injectWebhookConfiguration(ctx, "MutatingWebhookConfiguration", name, bundle,
			func() client.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} })
		record("MutatingWebhookConfiguration", name, found, err)
	}
	for _, name := range r.opts.ValidatingWebhookConfigurations {
		found, err := r.injectWebhookConfiguration(ctx, "ValidatingWebhookConfiguration", name, bundle,
			func() client.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} })
		record("ValidatingWebhookConfiguration", name, found, err)
	}
	for _, name := range r.opts.CRDs {
		found, err := r.injectCRD(ctx, name, bundle)
		record("CustomResourceDefinition", name, found, err)
	}
	return missing, errors.Join(errs...)
}

// webhookCABundles lists the webhooks of a webhook configuration with their
// current caBundle.
func webhookCABundles(obj client.Object) (names []string, bundles [][]byte) {
	switch o := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for _, w := range o.Webhooks {
			names, bundles = append(names, w.Name), append(bundles, w.ClientConfig.CABundle)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for _, w := range o.Webhooks {
			names, bundles = append(names, w.Name), append(bundles, w.ClientConfig.CABundle)
		}
	}
	return names, bundles
}

// injectWebhookConfiguration patches the caBundle of each webhook in one
// configuration whose caBundle differs from bundle.
//
// The patch is a strategic merge patch: webhooks is a list merged by name,
// so the patch names only the stale webhooks and only their
// clientConfig.caBundle; every other field, and every webhook already up to
// date, is left alone, so a later `kubectl apply` or Helm upgrade sees no
// drift it did not cause. The patch carries the resourceVersion that was
// read: if the configuration changed in between (a webhook removed, say),
// the API server rejects it with a conflict and it is recomputed, instead of
// resurrecting a webhook that was deleted.
func (r *Rotator) injectWebhookConfiguration(ctx context.Context, kind, name string, bundle []byte, newObj func() client.Object) (found bool, err error) {
	log := ctrllog.FromContext(ctx)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := newObj()
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return err
		}
		names, bundles := webhookCABundles(obj)
		var stale []any
		var staleNames []string
		for i, n := range names {
			if !bytes.Equal(bundles[i], bundle) {
				stale = append(stale, map[string]any{"name": n, "clientConfig": map[string]any{"caBundle": bundle}})
				staleNames = append(staleNames, n)
			}
		}
		if len(stale) == 0 {
			return nil
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion()},
			"webhooks": stale,
		})
		if err != nil {
			return fmt.Errorf("encoding patch: %w", err)
		}
		if err := r.client.Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
			return err
		}
		log.Info("Injected CA bundle", "kind", kind, "name", name, "webhooks", staleNames)
		return nil
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("injecting caBundle into %s %s: %w", kind, name, err)
	}
	return true, nil
}

// injectCRD patches spec.conversion.webhook.clientConfig.caBundle of a CRD
// that uses webhook conversion, with a JSON merge patch that names only that
// field (no lists are involved) and the resourceVersion read (see
// injectWebhookConfiguration). A CRD without webhook conversion is left
// alone: there is no clientConfig to complete.
func (r *Rotator) injectCRD(ctx context.Context, name string, bundle []byte) (found bool, err error) {
	log := ctrllog.FromContext(ctx)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		conv := crd.Spec.Conversion
		if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			log.V(1).Info("CRD does not use a conversion webhook; nothing to inject", "name", name)
			return nil
		}
		if bytes.Equal(conv.Webhook.ClientConfig.CABundle, bundle) {
			return nil
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": crd.ResourceVersion},
			"spec": map[string]any{"conversion": map[string]any{"webhook": map[string]any{
				"clientConfig": map[string]any{"caBundle": bundle},
			}}},
		})
		if err != nil {
			return fmt.Errorf("encoding patch: %w", err)
		}
		if err := r.client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return err
		}
		log.Info("Injected CA bundle", "kind", "CustomResourceDefinition", "name", name)
		return nil
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("injecting caBundle into CustomResourceDefinition %s: %w", name, err)
	}
	return true, nil
}
