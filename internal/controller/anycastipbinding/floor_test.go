package anycastipbinding

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// replayWrites measures the Kubernetes API floor of a benchmark run: the
// same writes the manager made (counts by verb and resource, from
// apicount.Counter), made as plain writes of the same kinds of objects by
// `workers` goroutines, one node's share after the other as the
// controller does, with no controller, cache or cloud involved. It
// returns how long they took and how many writes were replayed.
func replayWrites(ctx context.Context, b *testing.B, cfg *rest.Config, counts map[string]int, nodes []*corev1.Node, prefix string, workers int) (time.Duration, int) {
	b.Helper()
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	// Each node's share: the writes of each kind spread over the nodes.
	n := len(nodes)
	share := func(key string, i int) int {
		total := counts[key]
		k := total / n
		if i < total%n {
			k++
		}
		return k
	}
	var (
		mu       sync.Mutex
		replayed int
		firstErr error
	)
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for i := range work {
				done, err := replayNode(ctx, c, nodes[i], fmt.Sprintf("%s-floor-%03d", prefix, i), prefix, func(key string) int { return share(key, i) })
				mu.Lock()
				replayed += done
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for i := range nodes {
		work <- i
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	if firstErr != nil {
		b.Fatalf("replaying the writes: %v", firstErr)
	}
	return took, replayed
}

// replayNode makes one node's share of the writes, in the controller's
// order: the binding, its provider config usage, the annotations, the
// status updates, the node patch, the Events.
func replayNode(ctx context.Context, c client.Client, node *corev1.Node, name, prefix string, share func(string) int) (int, error) {
	done := 0
	bd := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{networkingv1alpha1.AnycastIPBindingFinalizer}},
		Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: node.Name}}
	bd.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: prefix + "-floor"}
	for range share("POST anycastipbindings") {
		if err := c.Create(ctx, bd); err != nil {
			return done, err
		}
		done++
	}
	for range share("POST clusterproviderconfigusages") {
		u := &cloudv1alpha1.ClusterProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Name: name}}
		u.ProviderConfigReference = xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: prefix + "-floor"}
		u.ResourceReference = xpv2.TypedReference{APIVersion: networkingv1alpha1.GroupVersion.String(), Kind: "AnycastIPBinding", Name: name, UID: bd.UID}
		if err := c.Create(ctx, u); err != nil {
			return done, err
		}
		done++
	}
	for j := range share("PATCH anycastipbindings") {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"crossplane.io/external-name":"eip-%08d","floor":"%d"}}}`, j, j)
		if err := c.Patch(ctx, bd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return done, err
		}
		done++
	}
	for range share("PUT anycastipbindings") {
		bd.Labels = map[string]string{"floor": fmt.Sprint(done)}
		if err := c.Update(ctx, bd); err != nil {
			return done, err
		}
		done++
	}
	for j := range share("PUT anycastipbindings/status") {
		bd.Status.State = fmt.Sprintf("STATE-%d", j)
		bd.Status.AddressID = "eip-floor"
		if err := c.Status().Update(ctx, bd); err != nil {
			return done, err
		}
		done++
	}
	for j := range share("PATCH nodes") {
		patch := fmt.Sprintf(`[{"op":"add","path":"/metadata/annotations","value":{"floor":"%d"}}]`, j)
		if err := c.Patch(ctx, node.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			return done, err
		}
		done++
	}
	for j := range share("POST events") {
		ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: fmt.Sprintf("%s.%d", name, j)},
			EventTime: metav1.NowMicro(), ReportingController: "edgeplane.io/floor", ReportingInstance: "floor",
			Action: "Bind", Reason: "Floor", Type: corev1.EventTypeNormal, Note: "floor",
			Regarding: corev1.ObjectReference{Kind: "Node", Name: node.Name, APIVersion: "v1", UID: node.UID}}
		if err := c.Create(ctx, ev); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}
