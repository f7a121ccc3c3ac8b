package translator

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestSourceKey(t *testing.T) {
	cases := map[string]struct {
		source  client.Object
		want    string
		wantErr bool
	}{
		"Namespaced": {
			source: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}},
			want:   "Pod/default/web-0",
		},
		"ClusterScoped": {
			source: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
			want:   "Node/node-1",
		},
		"KindNotInScheme": {
			source:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := newScheme(t)
			if tc.wantErr {
				scheme = runtime.NewScheme()
			}
			got, err := SourceKey(scheme, tc.source)
			if (err != nil) != tc.wantErr {
				t.Fatalf("SourceKey() error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("SourceKey() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseSourceKey(t *testing.T) {
	cases := map[string]struct {
		key      string
		wantKind string
		wantNN   types.NamespacedName
		wantErr  bool
	}{
		"Namespaced":    {key: "Pod/default/web-0", wantKind: "Pod", wantNN: types.NamespacedName{Namespace: "default", Name: "web-0"}},
		"ClusterScoped": {key: "Node/node-1", wantKind: "Node", wantNN: types.NamespacedName{Name: "node-1"}},
		"Empty":         {key: "", wantErr: true},
		"KindOnly":      {key: "Pod", wantErr: true},
		"TooManyParts":  {key: "Pod/a/b/c", wantErr: true},
		"EmptySegment":  {key: "Pod//web-0", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind, nn, err := ParseSourceKey(tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseSourceKey(%q) error = %v, want error %v", tc.key, err, tc.wantErr)
			}
			if kind != tc.wantKind || nn != tc.wantNN {
				t.Errorf("ParseSourceKey(%q) = %q, %v; want %q, %v", tc.key, kind, nn, tc.wantKind, tc.wantNN)
			}
		})
	}
}

func TestTranslatedFromAndMapToSource(t *testing.T) {
	cases := map[string]struct {
		labels      map[string]string
		annotations map[string]string
		wantIs      bool
		wantFrom    string
		wantOK      bool
		wantPodReqs []reconcile.Request
	}{
		"Translated": {
			labels:      map[string]string{LabelManagedBy: ManagedByTranslator},
			annotations: map[string]string{AnnotationTranslatedFrom: "Pod/default/web-0"},
			wantIs:      true, wantFrom: "Pod/default/web-0", wantOK: true,
			wantPodReqs: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web-0"}}},
		},
		"TranslatedFromOtherKind": {
			labels:      map[string]string{LabelManagedBy: ManagedByTranslator},
			annotations: map[string]string{AnnotationTranslatedFrom: "Node/node-1"},
			wantIs:      true, wantFrom: "Node/node-1", wantOK: true,
		},
		"ManagedByAnotherTool": {
			labels:      map[string]string{LabelManagedBy: "helm"},
			annotations: map[string]string{AnnotationTranslatedFrom: "Pod/default/web-0"},
		},
		"HandMade": {},
		"LabelWithoutAnnotation": {
			labels: map[string]string{LabelManagedBy: ManagedByTranslator},
			wantIs: true,
		},
		"MalformedAnnotation": {
			labels:      map[string]string{LabelManagedBy: ManagedByTranslator},
			annotations: map[string]string{AnnotationTranslatedFrom: "garbage"},
			wantIs:      true, wantFrom: "garbage", wantOK: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &widget{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: tc.labels, Annotations: tc.annotations}}
			if got := IsTranslated(obj); got != tc.wantIs {
				t.Errorf("IsTranslated() = %v, want %v", got, tc.wantIs)
			}
			from, ok := TranslatedFrom(obj)
			if from != tc.wantFrom || ok != tc.wantOK {
				t.Errorf("TranslatedFrom() = %q, %v; want %q, %v", from, ok, tc.wantFrom, tc.wantOK)
			}
			if diff := cmp.Diff(tc.wantPodReqs, MapToSource("Pod")(context.Background(), obj)); diff != "" {
				t.Errorf("MapToSource(Pod) (-want +got):\n%s", diff)
			}
		})
	}
}
