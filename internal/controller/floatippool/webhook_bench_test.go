package floatippool

import (
	"context"
	"fmt"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/admissionbench"
)

// poolReader serves the cache's read-only answers the validator asks for:
// every pool (the items shared, as with UnsafeDisableDeepCopy), no FloatIP.
type poolReader struct {
	pools []networkingv1alpha1.FloatIPPool
}

func (r poolReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return fmt.Errorf("unexpected Get")
}

func (r poolReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *networkingv1alpha1.FloatIPPoolList:
		l.Items = r.pools
	case *networkingv1alpha1.FloatIPList:
	default:
		return fmt.Errorf("unexpected list %T", list)
	}
	return nil
}

// benchPool is pool i of the webhook benchmark's shape: eleven IPs of its
// own /24.
func benchPool(i int) *networkingv1alpha1.FloatIPPool {
	return &networkingv1alpha1.FloatIPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: "FloatIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("wh-%03d", i), ResourceVersion: fmt.Sprint(1000 + i)},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{fmt.Sprintf("10.%d.%d.10~10.%d.%d.20", 100+i/250, i%250, 100+i/250, i%250)},
			Subnet: fmt.Sprintf("10.%d.%d.0/24", 100+i/250, i%250), NodeSubnets: []string{"192.168.0.0/16"}},
	}
}

// BenchmarkPoolWebhook is the validating webhook's cost per request (the
// whole HTTP handler, as the API server calls it): a pool's creation
// checked against 200 pools in the cache, as under test/bench/webhooks'
// 200 concurrent creations.
func BenchmarkPoolWebhook(b *testing.B) {
	var pools []networkingv1alpha1.FloatIPPool
	for i := range 200 {
		pools = append(pools, *benchPool(i))
	}
	h := admission.WithValidator(env.Scheme, &PoolValidator{Reader: poolReader{pools}})
	pool := benchPool(200)
	gvr := metav1.GroupVersionResource{Group: networkingv1alpha1.GroupVersion.Group, Version: "v1alpha1", Resource: "floatippools"}
	gvk := metav1.GroupVersionKind{Group: networkingv1alpha1.GroupVersion.Group, Version: "v1alpha1", Kind: "FloatIPPool"}
	body := admissionbench.Review(b, admissionv1.Create, gvr, gvk, "", pool.Name, pool, nil)
	if r := admissionbench.Serve(b, h, body); !r.Allowed {
		b.Fatalf("refused: %v", r.Result)
	}
	admissionbench.Bench(b, h, body)
}
