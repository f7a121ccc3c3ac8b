package ipam

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestParseInterfaces(t *testing.T) {
	const ifs, multus = networkingv1alpha1.AnnotationFloatIPInterfaces, networkingv1alpha1.AnnotationMultusNetworks
	cases := map[string]struct {
		annotations map[string]string
		want        []InterfaceRequest
		wantErr     string
	}{
		"absent": {annotations: map[string]string{}},
		"json interfaces": {
			annotations: map[string]string{ifs: `[{"interface":"eth0","pool":"public"},{"interface":"net1","pool":"storage"}]`},
			want:        []InterfaceRequest{{"eth0", "public"}, {"net1", "storage"}},
		},
		"short form": {
			annotations: map[string]string{ifs: "eth0=public, net1 = storage"},
			want:        []InterfaceRequest{{"eth0", "public"}, {"net1", "storage"}},
		},
		"multus networks by position and by request": {
			annotations: map[string]string{
				multus: "other/a, storage-net@data0, third",
				ifs:    `[{"network":"third","pool":"p3"},{"network":"default/storage-net","pool":"p2"},{"network":"other/a","pool":"p1"}]`,
			},
			want: []InterfaceRequest{{"net3", "p3"}, {"data0", "p2"}, {"net1", "p1"}},
		},
		"multus json form": {
			annotations: map[string]string{
				multus: `[{"name":"storage-net","interface":"st0","ips":["10.1.1.1/24"]},{"name":"x","namespace":"kube-system"}]`,
				ifs:    `[{"network":"storage-net","pool":"p"},{"network":"kube-system/x","pool":"q"}]`,
			},
			want: []InterfaceRequest{{"st0", "p"}, {"net2", "q"}},
		},
		"same pool twice": {
			annotations: map[string]string{ifs: "net1=p,net2=p"},
			want:        []InterfaceRequest{{"net1", "p"}, {"net2", "p"}},
		},
		"empty value":          {annotations: map[string]string{ifs: " "}, wantErr: "lists no interface"},
		"empty list":           {annotations: map[string]string{ifs: "[]"}, wantErr: "lists no interface"},
		"not json":             {annotations: map[string]string{ifs: `[{"interface":}]`}, wantErr: "not a JSON list"},
		"typo field":           {annotations: map[string]string{ifs: `[{"interface":"eth0","pol":"p"}]`}, wantErr: `unknown field "pol"`},
		"trailing json":        {annotations: map[string]string{ifs: `[{"interface":"eth0","pool":"p"}] x`}, wantErr: "trailing data"},
		"short without pool":   {annotations: map[string]string{ifs: "eth0"}, wantErr: "want <interface>=<pool>"},
		"no pool":              {annotations: map[string]string{ifs: `[{"interface":"eth0"}]`}, wantErr: "entry 0: pool"},
		"bad pool":             {annotations: map[string]string{ifs: "eth0=Public_Pool"}, wantErr: "is not a FloatIPPool name"},
		"long pool":            {annotations: map[string]string{ifs: "eth0=" + strings.Repeat("p", 64)}, wantErr: "is not a FloatIPPool name"},
		"neither":              {annotations: map[string]string{ifs: `[{"pool":"p"}]`}, wantErr: "names neither an interface nor a network"},
		"both":                 {annotations: map[string]string{ifs: `[{"interface":"net1","network":"n","pool":"p"}]`, multus: "n"}, wantErr: "not both"},
		"long interface":       {annotations: map[string]string{ifs: "averyverylongname0=p"}, wantErr: "interface \"averyverylongname0\""},
		"slash interface":      {annotations: map[string]string{ifs: "a/b=p"}, wantErr: "interface \"a/b\""},
		"dot interface":        {annotations: map[string]string{ifs: "..=p"}, wantErr: "interface \"..\""},
		"duplicate interface":  {annotations: map[string]string{ifs: "net1=p,net1=q"}, wantErr: "entries 0 and 1 both ask for interface net1"},
		"duplicate via multus": {annotations: map[string]string{ifs: `[{"interface":"net1","pool":"p"},{"network":"a","pool":"q"}]`, multus: "a"}, wantErr: "both ask for interface net1"},
		"network without multus": {
			annotations: map[string]string{ifs: `[{"network":"a","pool":"p"}]`},
			wantErr:     "needs the pod's k8s.v1.cni.cncf.io/networks annotation",
		},
		"unknown network": {
			annotations: map[string]string{ifs: `[{"network":"b","pool":"p"}]`, multus: "a"},
			wantErr:     "network default/b is not in the pod's",
		},
		"bad multus":      {annotations: map[string]string{ifs: "eth0=p", multus: `[{"name":1}]`}, wantErr: "is not a JSON list of networks"},
		"nameless multus": {annotations: map[string]string{ifs: "eth0=p", multus: "a,,b"}, wantErr: "network 1 has no name"},
		"too many": {
			annotations: map[string]string{ifs: "n1=p,n2=p,n3=p,n4=p,n5=p,n6=p,n7=p,n8=p,n9=p"},
			wantErr:     "at most 8",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseInterfaces(tc.annotations, "default")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), networkingv1alpha1.AnnotationFloatIPInterfaces) {
					t.Fatalf("err = %v does not name the annotation", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("interfaces (-want +got):\n%s", d)
			}
		})
	}
}

func TestRequestWithInterfaces(t *testing.T) {
	pod := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Annotations: annotations},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
			}}}},
		}
	}
	r, err := ParseRequest(pod(map[string]string{networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=a,net1=b"}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Slots() != 2 || r.SlotPool(1) != "b" || r.SlotInterface(1) != "net1" || !r.SlotAcceptsPool(0, "a") || r.SlotAcceptsPool(0, "b") {
		t.Fatalf("request = %+v", r)
	}
	// galaxy's requests name no pool or interface per slot.
	legacy, err := ParseRequest(pod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[["10.0.0.1"],["10.0.0.2"]]}`}))
	if err != nil {
		t.Fatal(err)
	}
	if legacy.Slots() != 2 || legacy.SlotPool(1) != "" || legacy.SlotInterface(0) != "" || !legacy.SlotAcceptsPool(1, "any") {
		t.Fatalf("legacy request = %+v", legacy)
	}
	for name, a := range map[string]map[string]string{
		"with request_ip_range": {networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=a", networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[["10.0.0.1"]]}`},
		"with a sharing pool":   {networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0=a", networkingv1alpha1.AnnotationENIIPPool: "shared"},
		"malformed":             {networkingv1alpha1.AnnotationFloatIPInterfaces: "eth0"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseRequest(pod(a)); err == nil || !strings.Contains(err.Error(), networkingv1alpha1.AnnotationFloatIPInterfaces) {
				t.Fatalf("err = %v, want a refusal naming %s", err, networkingv1alpha1.AnnotationFloatIPInterfaces)
			}
		})
	}
}

func FuzzParseInterfaces(f *testing.F) {
	f.Add(`[{"interface":"eth0","pool":"a"},{"network":"ns/n","pool":"b"}]`, `ns/n@net5`)
	f.Add("eth0=a,net1=b", "")
	f.Add(`[{"network":"x","pool":"p"}]`, `[{"name":"x","interface":"n"}]`)
	f.Add("=,", "@,/")
	f.Fuzz(func(t *testing.T, ifs, multus string) {
		got, err := ParseInterfaces(map[string]string{
			networkingv1alpha1.AnnotationFloatIPInterfaces: ifs,
			networkingv1alpha1.AnnotationMultusNetworks:    multus,
		}, "default")
		if err != nil {
			return
		}
		// Whatever parses is a usable request: 1..8 distinct valid names.
		if len(got) == 0 || len(got) > MaxInterfaces {
			t.Fatalf("%d interfaces accepted", len(got))
		}
		seen := map[string]bool{}
		for _, r := range got {
			if r.Interface == "" || len(r.Interface) > 15 || strings.ContainsAny(r.Interface, "/: \t\n") || r.Pool == "" || seen[r.Interface] {
				t.Fatalf("accepted %+v", got)
			}
			seen[r.Interface] = true
		}
	})
}
