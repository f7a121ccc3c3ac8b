package translator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// A manager's GetEventRecorder result must be usable as Ensure's recorder.
var _ events.EventRecorder = recorder.EventRecorder(nil)

// widget and clusterWidget stand in for a namespaced and a cluster-scoped
// edgeplane CR, so these tests do not depend on the API packages.
type widgetSpec struct {
	Address string `json:"address,omitempty"`
}

type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec,omitempty"`
}

func (w *widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type clusterWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec,omitempty"`
}

func (w *clusterWidget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

var testGV = schema.GroupVersion{Group: "test.edgeplane.io", Version: "v1"}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypeWithName(testGV.WithKind("Widget"), &widget{})
	s.AddKnownTypeWithName(testGV.WithKind("ClusterWidget"), &clusterWidget{})
	metav1.AddToGroupVersion(s, testGV)
	return s
}

// writeCounter counts mutating calls, to prove that unchanged objects are
// not written.
type writeCounter struct{ creates, patches, updates, deletes int }

func (w *writeCounter) total() int { return w.creates + w.patches + w.updates + w.deletes }

// newClient is a fresh API server for one test, and the translator's
// memory of its creations is fresh with it, as in a new process.
func newClient(t *testing.T, wc *writeCounter, funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	creations = newCreations()
	if funcs.Create == nil {
		funcs.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			wc.creates++
			return c.Create(ctx, obj, opts...)
		}
	}
	if funcs.Patch == nil {
		funcs.Patch = func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			wc.patches++
			return c.Patch(ctx, obj, p, opts...)
		}
	}
	if funcs.Update == nil {
		funcs.Update = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			wc.updates++
			return c.Update(ctx, obj, opts...)
		}
	}
	if funcs.Delete == nil {
		funcs.Delete = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			wc.deletes++
			return c.Delete(ctx, obj, opts...)
		}
	}
	return fake.NewClientBuilder().
		WithScheme(newScheme(t)).
		WithObjects(objs...).
		WithInterceptorFuncs(funcs).
		Build()
}

func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// view is the part of a stored object the translator is responsible for.
type view struct {
	Labels      map[string]string
	Annotations map[string]string
	Owners      []metav1.OwnerReference
	Finalizers  []string
	Spec        widgetSpec
}

func viewOf(obj client.Object) view {
	v := view{
		Labels:      obj.GetLabels(),
		Annotations: obj.GetAnnotations(),
		Owners:      obj.GetOwnerReferences(),
		Finalizers:  obj.GetFinalizers(),
	}
	switch o := obj.(type) {
	case *widget:
		v.Spec = o.Spec
	case *clusterWidget:
		v.Spec = o.Spec
	}
	return v
}

func testPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: "pod-uid"}}
}

func testNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
}

func podOwner(uid string) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "v1", Kind: "Pod", Name: "web-0", UID: types.UID(uid),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}
}

func ourLabels() map[string]string {
	return map[string]string{LabelManagedBy: ManagedByTranslator, LabelTranslatedFromKind: "Pod"}
}

func ourAnnotations() map[string]string {
	return map[string]string{AnnotationTranslatedFrom: "Pod/default/web-0"}
}

func setAddress(addr string) func(*widget) error {
	return func(w *widget) error {
		w.Spec.Address = addr
		return nil
	}
}

func TestEnsure(t *testing.T) {
	type want struct {
		result Result
		err    bool
		writes int
		events []string
		// stored is the object afterwards; nil means it must not exist.
		stored *view
	}
	cases := map[string]struct {
		existing []client.Object
		// cacheBehind makes the client's reads miss the existing object,
		// as an informer that has not caught up does.
		cacheBehind bool
		mutate      func(*widget) error
		want        want
	}{
		"CreatesMarkedObjectOwnedBySource": {
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultCreated,
				writes: 1,
				events: []string{"Normal Translated Created Widget default/web-0"},
				stored: &view{
					Labels: ourLabels(), Annotations: ourAnnotations(),
					Owners: []metav1.OwnerReference{podOwner("pod-uid")},
					Spec:   widgetSpec{Address: "1.2.3.4"},
				},
			},
		},
		"WritesNothingWhenUpToDate": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default", Labels: ourLabels(), Annotations: ourAnnotations(),
					OwnerReferences: []metav1.OwnerReference{podOwner("pod-uid")},
				},
				Spec: widgetSpec{Address: "1.2.3.4"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultUnchanged,
				stored: &view{
					Labels: ourLabels(), Annotations: ourAnnotations(),
					Owners: []metav1.OwnerReference{podOwner("pod-uid")},
					Spec:   widgetSpec{Address: "1.2.3.4"},
				},
			},
		},
		"PatchesChangedSpecAndKeepsOtherLabels": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default",
					Labels:          map[string]string{LabelManagedBy: ManagedByTranslator, LabelTranslatedFromKind: "Pod", "team": "edge"},
					Annotations:     ourAnnotations(),
					OwnerReferences: []metav1.OwnerReference{podOwner("pod-uid")},
				},
				Spec: widgetSpec{Address: "9.9.9.9"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultUpdated,
				writes: 1,
				events: []string{"Normal Translated Updated Widget default/web-0"},
				stored: &view{
					Labels:      map[string]string{LabelManagedBy: ManagedByTranslator, LabelTranslatedFromKind: "Pod", "team": "edge"},
					Annotations: ourAnnotations(),
					Owners:      []metav1.OwnerReference{podOwner("pod-uid")},
					Spec:        widgetSpec{Address: "1.2.3.4"},
				},
			},
		},
		"MovesOwnerReferenceToRecreatedSource": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default", Labels: ourLabels(), Annotations: ourAnnotations(),
					OwnerReferences: []metav1.OwnerReference{podOwner("old-pod-uid")},
				},
				Spec: widgetSpec{Address: "1.2.3.4"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultUpdated,
				writes: 1,
				events: []string{"Normal Translated Updated Widget default/web-0"},
				stored: &view{
					Labels: ourLabels(), Annotations: ourAnnotations(),
					Owners: []metav1.OwnerReference{podOwner("pod-uid")},
					Spec:   widgetSpec{Address: "1.2.3.4"},
				},
			},
		},
		"LeavesHandMadeObjectAlone": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"team": "edge"}},
				Spec:       widgetSpec{Address: "5.5.5.5"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultConflict,
				events: []string{"Warning TranslationConflict Did not translate into Widget default/web-0: it has no app.kubernetes.io/managed-by=edgeplane-translator label, so a person owns it"},
				stored: &view{Labels: map[string]string{"team": "edge"}, Spec: widgetSpec{Address: "5.5.5.5"}},
			},
		},
		"LeavesObjectTranslatedFromAnotherSourceAlone": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default", Labels: ourLabels(),
					Annotations: map[string]string{AnnotationTranslatedFrom: "Pod/default/web-1"},
				},
				Spec: widgetSpec{Address: "5.5.5.5"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultConflict,
				events: []string{"Warning TranslationConflict Did not translate into Widget default/web-0: it was translated from Pod/default/web-1"},
				stored: &view{
					Labels:      ourLabels(),
					Annotations: map[string]string{AnnotationTranslatedFrom: "Pod/default/web-1"},
					Spec:        widgetSpec{Address: "5.5.5.5"},
				},
			},
		},
		"LeavesObjectControlledByAnotherOwnerAlone": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default", Labels: ourLabels(), Annotations: ourAnnotations(),
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: ptr.To(true)}},
				},
				Spec: widgetSpec{Address: "5.5.5.5"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultConflict,
				events: []string{"Warning TranslationConflict Did not translate into Widget default/web-0: it is controlled by ReplicaSet web"},
				stored: &view{
					Labels: ourLabels(), Annotations: ourAnnotations(),
					Owners: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: ptr.To(true)}},
					Spec:   widgetSpec{Address: "5.5.5.5"},
				},
			},
		},
		"WaitsForTerminatingObject": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default", Labels: ourLabels(), Annotations: ourAnnotations(),
					Finalizers:        []string{"networking.edgeplane.io/finalizer"},
					DeletionTimestamp: &metav1.Time{Time: time.Unix(1700000000, 0)},
				},
				Spec: widgetSpec{Address: "9.9.9.9"},
			}},
			mutate: setAddress("1.2.3.4"),
			want: want{
				result: ResultTerminating,
				stored: &view{
					Labels: ourLabels(), Annotations: ourAnnotations(),
					Finalizers: []string{"networking.edgeplane.io/finalizer"},
					Spec:       widgetSpec{Address: "9.9.9.9"},
				},
			},
		},
		"LooksAgainWhenTheCacheHasNotSeenTheObject": {
			existing: []client.Object{&widget{
				ObjectMeta: metav1.ObjectMeta{
					Name: "web-0", Namespace: "default", Labels: ourLabels(), Annotations: ourAnnotations(),
					OwnerReferences: []metav1.OwnerReference{podOwner("pod-uid")},
				},
				Spec: widgetSpec{Address: "9.9.9.9"},
			}},
			cacheBehind: true,
			mutate:      setAddress("1.2.3.4"),
			want: want{
				// The one write is the refused creation: no error, no
				// Event, the stored object untouched.
				result: ResultNotCached,
				writes: 1,
				stored: &view{
					Labels: ourLabels(), Annotations: ourAnnotations(),
					Owners: []metav1.OwnerReference{podOwner("pod-uid")},
					Spec:   widgetSpec{Address: "9.9.9.9"},
				},
			},
		},
		"ReturnsMutateErrorWithoutWriting": {
			mutate: func(*widget) error { return errors.New("bad annotation") },
			want:   want{result: ResultUnchanged, err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			wc := &writeCounter{}
			behind := tc.cacheBehind
			c := newClient(t, wc, interceptor.Funcs{Get: cacheBehindGet(&behind)}, tc.existing...)
			rec := events.NewFakeRecorder(10)

			obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
			got, err := Ensure(ctx, c, rec, testPod(), obj, tc.mutate)
			behind = false // the checks below read the stored object
			if (err != nil) != tc.want.err {
				t.Fatalf("Ensure() error = %v, want error %v", err, tc.want.err)
			}
			if got != tc.want.result {
				t.Errorf("Ensure() = %q, want %q", got, tc.want.result)
			}
			if wc.total() != tc.want.writes {
				t.Errorf("writes = %+v, want %d in total", *wc, tc.want.writes)
			}
			if diff := cmp.Diff(tc.want.events, drain(rec)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			stored := &widget{}
			err = c.Get(ctx, client.ObjectKeyFromObject(obj), stored)
			if tc.want.stored == nil {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("Get() error = %v, want NotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Get(): %v", err)
			}
			if diff := cmp.Diff(*tc.want.stored, viewOf(stored)); diff != "" {
				t.Errorf("stored object (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnsureOwnerReferenceByScope covers the scope combinations Kubernetes
// accepts or rejects for owner references.
func TestEnsureOwnerReferenceByScope(t *testing.T) {
	nodeOwner := metav1.OwnerReference{
		APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "node-uid",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}
	cases := map[string]struct {
		source     client.Object
		obj        client.Object
		wantKey    string
		wantKind   string
		wantOwners []metav1.OwnerReference
	}{
		"ClusterScopedSourceOwnsClusterScopedObject": {
			source:     testNode(),
			obj:        &clusterWidget{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
			wantKey:    "Node/node-1",
			wantKind:   "Node",
			wantOwners: []metav1.OwnerReference{nodeOwner},
		},
		"ClusterScopedSourceOwnsNamespacedObject": {
			source:     testNode(),
			obj:        &widget{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "default"}},
			wantKey:    "Node/node-1",
			wantKind:   "Node",
			wantOwners: []metav1.OwnerReference{nodeOwner},
		},
		"NamespacedSourceCannotOwnClusterScopedObject": {
			source:   testPod(),
			obj:      &clusterWidget{ObjectMeta: metav1.ObjectMeta{Name: "web-0"}},
			wantKey:  "Pod/default/web-0",
			wantKind: "Pod",
		},
		"NamespacedSourceCannotOwnObjectInOtherNamespace": {
			source:   testPod(),
			obj:      &widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "other"}},
			wantKey:  "Pod/default/web-0",
			wantKind: "Pod",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, &writeCounter{}, interceptor.Funcs{})

			got, err := Ensure(ctx, c, nil, tc.source, tc.obj, func(client.Object) error { return nil })
			if err != nil {
				t.Fatalf("Ensure(): %v", err)
			}
			if got != ResultCreated {
				t.Errorf("Ensure() = %q, want %q", got, ResultCreated)
			}
			stored := tc.obj.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.obj), stored); err != nil {
				t.Fatalf("Get(): %v", err)
			}
			want := view{
				Labels:      map[string]string{LabelManagedBy: ManagedByTranslator, LabelTranslatedFromKind: tc.wantKind},
				Annotations: map[string]string{AnnotationTranslatedFrom: tc.wantKey},
				Owners:      tc.wantOwners,
			}
			if diff := cmp.Diff(want, viewOf(stored)); diff != "" {
				t.Errorf("stored object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnsureRejectsSourceWithoutUID(t *testing.T) {
	wc := &writeCounter{}
	c := newClient(t, wc, interceptor.Funcs{})
	src := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
	obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}

	if _, err := Ensure(context.Background(), c, nil, src, obj, setAddress("1.2.3.4")); err == nil {
		t.Fatal("Ensure() error = nil, want an error for a source without UID")
	}
	if wc.total() != 0 {
		t.Errorf("writes = %+v, want none", *wc)
	}
}

func TestDelete(t *testing.T) {
	ours := func() *widget {
		return &widget{ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "default", Labels: ourLabels(), Annotations: ourAnnotations(),
		}}
	}
	staleGet := interceptor.Funcs{
		// Simulates an object changed between our Get and our Delete.
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			obj.SetResourceVersion("1")
			return nil
		},
	}
	cases := map[string]struct {
		existing    []client.Object
		source      client.Object
		funcs       interceptor.Funcs
		wantResult  Result
		wantErr     bool
		wantEvents  []string
		wantDeletes int
		wantExists  bool
	}{
		"DeletesOurObject": {
			existing:    []client.Object{ours()},
			source:      testPod(),
			wantResult:  ResultDeleted,
			wantEvents:  []string{"Normal TranslationDeleted Deleted Widget default/web-0"},
			wantDeletes: 1,
		},
		"DeletesQuietlyForDeletedSource": {
			existing:    []client.Object{ours()},
			source:      &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}},
			wantResult:  ResultDeleted,
			wantDeletes: 1,
		},
		"NothingToDelete": {
			source:     testPod(),
			wantResult: ResultUnchanged,
		},
		"KeepsHandMadeObject": {
			existing: []client.Object{&widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}},
			source:   testPod(),
			wantEvents: []string{"Warning TranslationConflict Did not delete Widget default/web-0: " +
				"it has no app.kubernetes.io/managed-by=edgeplane-translator label, so a person owns it"},
			wantResult: ResultConflict,
			wantExists: true,
		},
		"KeepsObjectTranslatedFromAnotherSource": {
			existing: []client.Object{&widget{ObjectMeta: metav1.ObjectMeta{
				Name: "web-0", Namespace: "default", Labels: ourLabels(),
				Annotations: map[string]string{AnnotationTranslatedFrom: "Pod/default/web-1"},
			}}},
			source:     testPod(),
			wantEvents: []string{"Warning TranslationConflict Did not delete Widget default/web-0: it was translated from Pod/default/web-1"},
			wantResult: ResultConflict,
			wantExists: true,
		},
		"LeavesTerminatingObjectToItsFinalizer": {
			existing: []client.Object{func() client.Object {
				w := ours()
				w.Finalizers = []string{"networking.edgeplane.io/finalizer"}
				w.DeletionTimestamp = &metav1.Time{Time: time.Unix(1700000000, 0)}
				return w
			}()},
			source:     testPod(),
			wantResult: ResultUnchanged,
			wantExists: true,
		},
		"RefusesToDeleteAChangedObject": {
			existing:    []client.Object{ours()},
			source:      testPod(),
			funcs:       staleGet,
			wantResult:  ResultUnchanged,
			wantErr:     true,
			wantDeletes: 1,
			wantExists:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			wc := &writeCounter{}
			c := newClient(t, wc, tc.funcs, tc.existing...)
			rec := events.NewFakeRecorder(10)

			obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
			got, err := Delete(ctx, c, rec, tc.source, obj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Delete() error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr && !apierrors.IsConflict(err) {
				t.Errorf("Delete() error = %v, want a wrapped Conflict", err)
			}
			if got != tc.wantResult {
				t.Errorf("Delete() = %q, want %q", got, tc.wantResult)
			}
			if wc.deletes != tc.wantDeletes || wc.total() != wc.deletes {
				t.Errorf("writes = %+v, want %d deletes and nothing else", *wc, tc.wantDeletes)
			}
			if diff := cmp.Diff(tc.wantEvents, drain(rec)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			err = c.Get(ctx, client.ObjectKeyFromObject(obj), &widget{})
			if exists := err == nil; exists != tc.wantExists {
				t.Errorf("object exists = %v (Get error %v), want %v", exists, err, tc.wantExists)
			}
		})
	}
}

func TestRequeue(t *testing.T) {
	for _, r := range []Result{ResultUnchanged, ResultCreated, ResultUpdated, ResultDeleted, ResultConflict, ResultTerminating} {
		if got := Requeue(r); !got.IsZero() {
			t.Errorf("Requeue(%s) = %+v, want none", r, got)
		}
	}
	if got := Requeue(ResultNotCached); got.RequeueAfter != NotCachedRetry {
		t.Errorf("Requeue(%s) = %+v, want a retry after %s", ResultNotCached, got, NotCachedRetry)
	}
}

// A pass the cache serves before this process's own creation reached it
// sends no second creation (the API server would refuse it), and a
// deletion of ours lets the next Ensure create again at once.
func TestEnsureRemembersItsCreations(t *testing.T) {
	ctx := context.Background()
	wc := &writeCounter{}
	behind := false
	c := newClient(t, wc, interceptor.Funcs{Get: cacheBehindGet(&behind)})
	ensure := func() Result {
		t.Helper()
		obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
		res, err := Ensure(ctx, c, nil, testPod(), obj, setAddress("1.2.3.4"))
		if err != nil {
			t.Fatalf("Ensure: %v", err)
		}
		return res
	}
	steps := []struct {
		name    string
		behind  bool
		do      func() Result
		want    Result
		creates int
	}{
		{"creates", false, ensure, ResultCreated, 1},
		{"the cache is behind its creation: no second creation", true, ensure, ResultNotCached, 1},
		{"the cache shows it", false, ensure, ResultUnchanged, 1},
		{"the cache is behind again: it was seen, so a creation is tried (and refused)", true, ensure, ResultNotCached, 2},
		{"deleted", false, func() Result {
			res, err := Delete(ctx, c, nil, testPod(), &widget{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}})
			if err != nil {
				t.Fatalf("Delete: %v", err)
			}
			return res
		}, ResultDeleted, 2},
		{"created again at once", false, ensure, ResultCreated, 3},
	}
	for _, s := range steps {
		behind = s.behind
		if got := s.do(); got != s.want {
			t.Fatalf("%s: result %q, want %q", s.name, got, s.want)
		}
		if wc.creates != s.creates {
			t.Fatalf("%s: %d creations sent, want %d", s.name, wc.creates, s.creates)
		}
	}
}

// cacheBehindGet makes the client's reads miss every widget while *behind
// is set, as an informer that has not caught up does.
func cacheBehindGet(behind *bool) func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
	return func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if *behind {
			return apierrors.NewNotFound(schema.GroupResource{Group: testGV.Group, Resource: "widgets"}, key.Name)
		}
		return c.Get(ctx, key, obj, opts...)
	}
}
