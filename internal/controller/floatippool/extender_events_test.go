package floatippool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// apiRecorder records Events to the test API server, as the manager's
// recorder does.
func apiRecorder(t *testing.T) events.EventRecorder {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	ctx, cancel := context.WithCancel(context.Background())
	b.StartRecordingToSink(ctx.Done())
	t.Cleanup(func() { cancel(); b.Shutdown() })
	return b.NewRecorder(env.Scheme, ExtenderName)
}

// podEvents lists the Events regarding pod with reason.
func podEvents(t *testing.T, ctx context.Context, pod *corev1.Pod, reason string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	must(t, env.Client.List(ctx, &list, client.InNamespace(pod.Namespace)))
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.UID == pod.UID && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// waitPodEvent waits for an Event regarding pod with reason.
func waitPodEvent(t *testing.T, ctx context.Context, pod *corev1.Pod, reason string) eventsv1.Event {
	t.Helper()
	var got []eventsv1.Event
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got = podEvents(t, ctx, pod, reason)
		return len(got) > 0, nil
	})
	if err != nil {
		t.Fatalf("no %s Event on pod %s: %v", reason, pod.Name, err)
	}
	return got[0]
}

// TestFilterReportsBadRequestsOnThePod: a malformed or unknown galaxy
// annotation, or a request the pod's workload cannot use, fails every node
// as unresolvable and gets a Warning Event on the pod from edgeplane itself,
// naming the annotation and why.
func TestFilterReportsBadRequestsOnThePod(t *testing.T) {
	f := newFixture(t, "badreq", []string{"10.0.7.10~10.0.7.20"}, networkingv1alpha1.ReleasePolicyDefault)
	f.ext.Recorder = apiRecorder(t)
	nodes := ensureNodes(t, f.ctx)
	cases := []struct {
		pod         string
		annotations map[string]string
		owner       bool
		reason      string
		wantNote    string
	}{
		{pod: "unknown-policy", annotations: map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "immutible"},
			reason: "InvalidAnnotation", wantNote: `annotation k8s.v1.cni.galaxy.io/release-policy="immutible"`},
		{pod: "args-not-json", annotations: map[string]string{"k8s.v1.cni.galaxy.io/args": `{"request_ip_range":[["10.0.7.11"]]`},
			reason: "InvalidAnnotation", wantNote: "annotation k8s.v1.cni.galaxy.io/args is not valid JSON args"},
		{pod: "args-bad-range", annotations: map[string]string{"k8s.v1.cni.galaxy.io/args": `{"request_ip_range":[["10.0.7.20~10.0.7.11"]]}`},
			reason: "InvalidAnnotation", wantNote: "annotation k8s.v1.cni.galaxy.io/args: request_ip_range[0]"},
		{pod: "never-without-owner", annotations: map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "never"},
			reason: "UnsupportedFloatIPRequest", wantNote: "NotStatefulWorkload"},
		// Any other refusal that is not a failure to read the cluster: here
		// immutable for an owner kind the API server does not serve.
		{pod: "unserved-0", annotations: map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "immutable"}, owner: true,
			reason: "UnsupportedFloatIPRequest", wantNote: "finding the resource of example.com/v1, Kind=Unserved"},
	}
	for _, tc := range cases {
		t.Run(tc.pod, func(t *testing.T) {
			var owner *metav1.OwnerReference
			if tc.owner {
				owner = &metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Unserved", Name: "unserved", UID: "unserved-uid", Controller: ptr.To(true)}
			}
			pod := f.pod(tc.pod, owner, tc.annotations)
			res := f.filter(pod, nodes)
			if res.Error != "" || (res.Nodes != nil && len(res.Nodes.Items) > 0) {
				t.Fatalf("filter = %+v, want every node failed as unresolvable", res)
			}
			for _, n := range nodes {
				if !strings.Contains(res.FailedAndUnresolvableNodes[n.Name], tc.wantNote) {
					t.Errorf("node %s: unresolvable reason %q, want it to contain %q", n.Name, res.FailedAndUnresolvableNodes[n.Name], tc.wantNote)
				}
			}
			ev := waitPodEvent(t, f.ctx, pod, tc.reason)
			if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Note, tc.wantNote) || ev.ReportingController != "floatippool-extender" {
				t.Errorf("Event = type %s, note %q, controller %q; want a Warning from floatippool-extender containing %q", ev.Type, ev.Note, ev.ReportingController, tc.wantNote)
			}
		})
	}

	// Bind reports the same problem on the pod (its annotations changed
	// after the filter, or a scheduler bound without filtering).
	pod := f.pod("bind-unknown-policy", nil, map[string]string{"k8s.v1.cni.galaxy.io/release-policy": "forever"})
	if msg := f.bind(pod, "n1"); !strings.Contains(msg, "k8s.v1.cni.galaxy.io/release-policy") {
		t.Fatalf("bind = %q, want the annotation named", msg)
	}
	waitPodEvent(t, f.ctx, pod, "InvalidAnnotation")
	if n := len(f.fips()); n != 0 {
		t.Errorf("%d FloatIPs after refused requests, want 0", n)
	}
}

// TestTransient: only failures to read the cluster are transient.
func TestTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"API server unavailable":         {err: apierrors.NewServiceUnavailable("etcd is down"), want: true},
		"NotFound from a cache, wrapped": {err: fmt.Errorf("getting namespace x: %w", apierrors.NewNotFound(corev1.Resource("namespaces"), "x")), want: true},
		"forbidden":                      {err: apierrors.NewForbidden(corev1.Resource("pods"), "p", errors.New("rbac")), want: true},
		"connection refused":             {err: fmt.Errorf("listing: %w", &url.Error{Op: "Get", URL: "https://api", Err: refused}), want: true},
		"deadline":                       {err: fmt.Errorf("listing: %w", context.DeadlineExceeded), want: true},
		"a request error":                {err: requestError(ReasonInvalidAnnotation, errors.New("annotation x")), want: false},
		"an unserved owner kind":         {err: fmt.Errorf("finding the resource: %w", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "X"}}), want: false},
		"any other refusal":              {err: errors.New("FloatIPPool nope does not exist"), want: false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := transient(tc.err); got != tc.want {
				t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestFilterTransientErrorIsNotUnresolvable: when the extender cannot read
// what it needs (here the API server is unreachable), it answers with an
// extender error, which the scheduler retries, never with unresolvable
// nodes; and the pod gets no Event blaming its request.
func TestFilterTransientErrorIsNotUnresolvable(t *testing.T) {
	f := newFixture(t, "transient", []string{"10.0.8.10~10.0.8.20"}, networkingv1alpha1.ReleasePolicyDefault)
	f.ext.Recorder = apiRecorder(t)
	nodes := ensureNodes(t, f.ctx)
	pod := f.pod("p", nil, nil)

	// A reader whose API server is gone: a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	must(t, l.Close())
	down, err := client.New(&rest.Config{Host: "http://" + addr, Timeout: 2 * time.Second}, client.Options{Scheme: env.Scheme, Mapper: env.Client.RESTMapper()})
	must(t, err)
	f.ext.Allocator.Reader = down

	res := f.filter(pod, nodes)
	if res.Error == "" || len(res.FailedAndUnresolvableNodes) != 0 || len(res.FailedNodes) != 0 {
		t.Fatalf("filter = %+v, want an extender error and no failed nodes", res)
	}
	if !strings.Contains(res.Error, "connection refused") {
		t.Errorf("error %q does not say what failed", res.Error)
	}
	// The same pod passes once the API server answers again.
	f.ext.Allocator.Reader = env.Client
	if res := f.filter(pod, nodes); res.Error != "" || res.Nodes == nil || len(res.Nodes.Items) != 1 {
		t.Fatalf("filter after recovery = %+v, want n1", res)
	}
	// Events reach the API server in the order they are recorded: once a
	// later one is there, a wrong one would be too.
	f.ext.Recorder.Eventf(pod, nil, corev1.EventTypeNormal, "TestMarker", "Test", "after the transient failure")
	waitPodEvent(t, f.ctx, pod, "TestMarker")
	for _, reason := range []string{"InvalidAnnotation", "UnsupportedFloatIPRequest"} {
		if evs := podEvents(t, f.ctx, pod, reason); len(evs) > 0 {
			t.Errorf("a transient failure put a %s Event on the pod: %q", reason, evs[0].Note)
		}
	}
}
