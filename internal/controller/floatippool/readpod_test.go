package floatippool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// laggingCache answers NotFound (or err) for its first misses look-ups,
// then has pod.
type laggingCache struct {
	client.Reader
	pod    *corev1.Pod
	misses int32
	err    error
	gets   atomic.Int32
}

func (c *laggingCache) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if n := c.gets.Add(1); n <= c.misses || c.pod == nil {
		if c.err != nil {
			return c.err
		}
		return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")
	}
	c.pod.DeepCopyInto(obj.(*corev1.Pod))
	return nil
}

// countingLive is the API server: it has pod and counts reads.
type countingLive struct {
	client.Reader
	pod  *corev1.Pod
	gets atomic.Int32
}

func (l *countingLive) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	l.gets.Add(1)
	l.pod.DeepCopyInto(obj.(*corev1.Pod))
	return nil
}

// TestReadPod: a bind reads its pod from the cache once the cache shows
// that pod (no read of the API server while the informer lags a little),
// and from the API server when the cache cannot answer for the namespace,
// keeps an older pod of the name, or lags too long; a pod of another UID
// is refused.
func TestReadPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	older := pod.DeepCopy()
	older.UID = "u0"
	for _, tc := range []struct {
		name      string
		cache     *laggingCache
		wantLive  int32
		uid       types.UID
		wantError bool
	}{
		{name: "in the cache", cache: &laggingCache{pod: pod}, uid: "u1"},
		{name: "the cache lags a few polls", cache: &laggingCache{pod: pod, misses: 5}, uid: "u1"},
		{name: "the cache does not hold the namespace", cache: &laggingCache{pod: pod, misses: 1000, err: errors.New("unknown namespace for the cache")}, uid: "u1", wantLive: 1},
		{name: "the cache lags past the wait", cache: &laggingCache{misses: 1 << 20}, uid: "u1", wantLive: 1},
		{name: "the cache keeps an older pod of the name", cache: &laggingCache{pod: older}, uid: "u1", wantLive: 1},
		{name: "another pod of that name", cache: &laggingCache{pod: pod}, uid: "u2", wantLive: 1, wantError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := &countingLive{pod: pod}
			a := &Allocator{Reader: tc.cache, Live: live}
			got, err := a.readPod(context.Background(), client.ObjectKeyFromObject(pod), tc.uid)
			if (err != nil) != tc.wantError {
				t.Fatalf("readPod: %v, want error %v", err, tc.wantError)
			}
			if !tc.wantError && got.UID != tc.uid {
				t.Errorf("read pod UID %s, want %s", got.UID, tc.uid)
			}
			if n := live.gets.Load(); n != tc.wantLive {
				t.Errorf("read the API server %d times, want %d", n, tc.wantLive)
			}
		})
	}
}
