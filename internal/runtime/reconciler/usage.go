package reconciler

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// trackUsage starts recording the object's provider config usage (unless
// it was recorded recently); waitUsage collects the result. The pass
// observes meanwhile, and waits for it before any change.
func (p *pass[T]) trackUsage(ctx context.Context) {
	r := p.r
	if r.o.Usage == nil {
		return
	}
	key := string(p.obj.GetUID())
	if ref := p.obj.GetProviderConfigReference(); ref != nil {
		key += "|" + ref.Kind + "/" + ref.Name
	}
	if _, ok := r.usages.Get(key); ok {
		return
	}
	cp := copyOf(p.obj)
	// The usage names its resource by the object's kind, which a typed
	// client leaves empty.
	if gvk, err := apiutil.GVKForObject(cp, r.o.Client.Scheme()); err == nil {
		cp.GetObjectKind().SetGroupVersionKind(gvk)
	}
	ch := make(chan error, 1)
	p.usage = ch
	go func() {
		err := r.o.Usage.Track(ctx, cp)
		// A usage this process created moments ago may not be in the
		// cache yet: the tracker then fails to create it again, which
		// means it exists.
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		if err == nil {
			r.usages.Record(key, struct{}{}, "")
		}
		ch <- err
	}()
}

func (p *pass[T]) waitUsage(ctx context.Context) error {
	if p.usage == nil {
		return nil
	}
	select {
	case err := <-p.usage:
		p.usage = nil
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
