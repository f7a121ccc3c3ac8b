package status

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestPatch(t *testing.T) {
	gv := schema.GroupVersion{Group: "test.edgeplane.io", Version: "v1"}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gv.WithKind("Thing"), &thing{})
	metav1.AddToGroupVersion(scheme, gv)

	stored := func() *thing {
		return &thing{
			ObjectMeta: metav1.ObjectMeta{Name: "pool", Generation: 2},
			Spec:       thingSpec{Size: 4},
		}
	}
	readyNow := func(obj *thing) {
		SetReady(obj, metav1.ConditionTrue, "Allocated", "4 of 4 IPs allocated")
		ObserveGeneration(obj)
		obj.Status.Allocated = 4
	}

	cases := map[string]struct {
		// change turns the object read at the start of the pass into the
		// desired one.
		change func(*thing)
		// concurrent, if set, writes the stored object between the read and
		// the patch.
		concurrent  bool
		deleted     bool
		patchErr    error
		wantResult  reconcile.Result
		wantErr     bool
		wantPatches int
		wantStatus  *thingStatus
	}{
		"WritesNothingWhenStatusUnchanged": {
			change:     func(*thing) {},
			wantStatus: &thingStatus{},
		},
		"WritesChangedStatusOnce": {
			change:      readyNow,
			wantPatches: 1,
			wantStatus: &thingStatus{
				ObservedGeneration: 2,
				Allocated:          4,
				Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Allocated",
					Message: "4 of 4 IPs allocated", ObservedGeneration: 2}},
			},
		},
		"ConflictIsAQuietRequeue": {
			change:      readyNow,
			concurrent:  true,
			wantPatches: 1,
			wantResult:  reconcile.Result{RequeueAfter: ConflictRequeueAfter},
			wantStatus:  &thingStatus{},
		},
		"DeletedObjectIsNotAnError": {
			change:      readyNow,
			deleted:     true,
			wantPatches: 1,
		},
		"OtherErrorsAreReturned": {
			change:      readyNow,
			patchErr:    apierrors.NewInternalError(errors.New("etcd unavailable")),
			wantPatches: 1,
			wantErr:     true,
			wantStatus:  &thingStatus{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			patches := 0
			c := fake.NewClientBuilder().
				WithScheme(scheme).
				WithObjects(stored()).
				WithStatusSubresource(&thing{}).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
						patches++
						if tc.patchErr != nil {
							return tc.patchErr
						}
						return c.SubResource(sub).Patch(ctx, obj, p, opts...)
					},
				}).
				Build()

			obj := &thing{}
			if err := c.Get(ctx, client.ObjectKey{Name: "pool"}, obj); err != nil {
				t.Fatalf("Get(): %v", err)
			}
			before := obj.DeepCopy()
			tc.change(obj)
			if tc.concurrent {
				other := before.DeepCopy()
				other.Labels = map[string]string{"touched": "true"}
				if err := c.Update(ctx, other); err != nil {
					t.Fatalf("concurrent Update(): %v", err)
				}
			}
			if tc.deleted {
				if err := c.Delete(ctx, before.DeepCopy()); err != nil {
					t.Fatalf("Delete(): %v", err)
				}
			}

			got, err := Patch(ctx, c, before, obj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Patch() error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.wantResult {
				t.Errorf("Patch() = %+v, want %+v", got, tc.wantResult)
			}
			if patches != tc.wantPatches {
				t.Errorf("status patches = %d, want %d", patches, tc.wantPatches)
			}

			if tc.wantStatus == nil {
				return
			}
			fresh := &thing{}
			if err := c.Get(ctx, client.ObjectKey{Name: "pool"}, fresh); err != nil {
				t.Fatalf("Get(): %v", err)
			}
			// Transition times are set from the wall clock; their handling
			// is covered by TestSet.
			for i := range fresh.Status.Conditions {
				fresh.Status.Conditions[i].LastTransitionTime = metav1.Time{}
			}
			if diff := cmp.Diff(*tc.wantStatus, fresh.Status); diff != "" {
				t.Errorf("stored status (-want +got):\n%s", diff)
			}
			if fresh.Spec != stored().Spec {
				t.Errorf("spec = %+v, want it untouched", fresh.Spec)
			}
		})
	}
}
