package manager

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// BenchmarkCachedBoundPod measures what the manager's cache keeps per
// running pod: pods as the API server sends them in a watch (protobuf, with
// the fields admission and the kubelet add, as in test/bench/scale), decoded
// as the informer does, put through the cache's pod transform and stored in
// an indexer with controller-runtime's namespace index. B/pod is the heap
// the stored pods retain, divided by their number; with 50,000 pods it is
// most of what the scale envelope's manager holds (docs/operations.md).
func BenchmarkCachedBoundPod(b *testing.B) {
	const n = 20000
	codec := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	raw := make([][]byte, n)
	for i := range n {
		var buf bytes.Buffer
		if err := codec.Encode(runningPod(i), &buf); err != nil {
			b.Fatal(err)
		}
		raw[i] = buf.Bytes()
	}
	transform := podTransform(b)
	var perPod float64
	for range b.N {
		store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		before := heapAlloc()
		for i := range n {
			decoded, _, err := codec.Decode(raw[i], nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			cached, err := transform(decoded)
			if err != nil {
				b.Fatal(err)
			}
			if err := store.Add(cached); err != nil {
				b.Fatal(err)
			}
		}
		perPod = float64(heapAlloc()-before) / n
		runtime.KeepAlive(store)
	}
	b.ReportMetric(perPod, "B/pod")
}

func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func podTransform(b *testing.B) toolscache.TransformFunc {
	for obj, o := range CacheOptions("").ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			return o.Transform
		}
	}
	b.Fatal("no pod transform in CacheOptions")
	return nil
}

// runningPod is a plain pod of test/bench/scale as the API server holds it
// once kwok runs it: created bound to a node by a client, defaulted and
// admitted, its status written by kwok, with both writers' managed fields.
func runningPod(i int) *corev1.Pod {
	now := metav1.NewTime(time.Unix(1700000000, 0).Add(time.Duration(i) * time.Millisecond))
	ip := fmt.Sprintf("10.0.%d.%d", i/256%256, i%256)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("plain-%02d", i%100), Name: fmt.Sprintf("plain-%05d", i),
			UID:             types.UID(fmt.Sprintf("0f1e2d3c-4b5a-6978-8796-a5b4c3%06d", i)),
			ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: now,
			Labels: map[string]string{"app": fmt.Sprintf("plain-%d", i%50), "tier": "backend"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "scale.test", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{"f:automountServiceAccountToken":{},"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:args":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{}}},"f:nodeName":{},"f:terminationGracePeriodSeconds":{}}}`)},
				{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("n%04d", (i*7)%5000),
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/team/app:1.4.2", Args: []string{"--listen=:8080", "--log-format=json"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
					PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](1), DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", DeprecatedServiceAccount: "default", AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: corev1.DefaultSchedulerName, Priority: ptr.To[int32](0),
			EnableServiceLinks: ptr.To(true), PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
			PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Started: ptr.To(true), Image: "registry.example.com/team/app:1.4.2",
				ImageID: "", ContainerID: "", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
		},
	}
}
