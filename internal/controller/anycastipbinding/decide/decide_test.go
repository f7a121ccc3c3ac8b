package decide

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

func node(labels map[string]string, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestInstanceID(t *testing.T) {
	label := func(v string) map[string]string {
		return map[string]string{networkingv1alpha1.LegacyLabelNodeInstanceID: v}
	}
	cases := map[string]struct {
		node    *corev1.Node
		want    string
		wantErr bool
	}{
		"providerID qcloud":                   {node: node(nil, "qcloud:///800002/ins-0a1b2c3d"), want: "ins-0a1b2c3d"},
		"providerID tencent":                  {node: node(nil, "tencentcloud:///ap-hongkong-2/ins-0a1b2c3d/"), want: "ins-0a1b2c3d"},
		"the label names another instance":    {node: node(label("ins-abc12345"), "qcloud:///800002/ins-zzzzzzzz"), want: "ins-zzzzzzzz"},
		"the label alone names nothing":       {node: node(label("ins-abc12345"), ""), wantErr: true},
		"a malformed label changes nothing":   {node: node(label("i-123"), "qcloud:///1/ins-0a1b2c3d"), want: "ins-0a1b2c3d"},
		"aws providerID":                      {node: node(nil, "aws:///us-east-1a/i-0123456789abcdef0"), wantErr: true},
		"kwok providerID":                     {node: node(nil, "kwok://n1"), wantErr: true},
		"kwok providerID with the label":      {node: node(label("ins-abc12345"), "kwok://n1"), wantErr: true},
		"nothing":                             {node: node(nil, ""), wantErr: true},
		"providerID with a malformed segment": {node: node(nil, "qcloud:///800002/ins-TOOLONG99"), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := InstanceID(tc.node)
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrNoInstanceID)) {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBindingInstance(t *testing.T) {
	label := map[string]string{networkingv1alpha1.LegacyLabelNodeInstanceID: "ins-victim01"}
	cases := map[string]struct {
		recorded string
		node     *corev1.Node
		want     string
		wantErr  error
	}{
		"first pass: the providerID":              {node: node(label, "qcloud:///1/ins-node0001"), want: "ins-node0001"},
		"recorded and unchanged":                  {recorded: "ins-node0001", node: node(nil, "qcloud:///1/ins-node0001"), want: "ins-node0001"},
		"recorded, the label names another":       {recorded: "ins-node0001", node: node(label, "qcloud:///1/ins-node0001"), want: "ins-node0001"},
		"recorded, the node registered again":     {recorded: "ins-node0001", node: node(nil, "qcloud:///1/ins-node0002"), wantErr: ErrInstanceChanged},
		"recorded, the node lost its providerID":  {recorded: "ins-node0001", node: node(label, ""), wantErr: ErrNoInstanceID},
		"no providerID, the label names a victim": {node: node(label, ""), wantErr: ErrNoInstanceID},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := BindingInstance(tc.recorded, tc.node)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) || got != tc.want {
				t.Fatalf("BindingInstance = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestTags(t *testing.T) {
	got := Tags(TagInput{Cluster: "c1", OwnerUID: "uid-1", NodeName: "n1", InstanceID: "ins-1", User: map[string]string{"team": "edge", TagCluster: "evil", "aia-node-name": "evil"}})
	want := map[string]string{"team": "edge", TagCluster: "c1", TagOwnerKind: OwnerKind, TagOwnerUID: "uid-1", TagNodeName: "n1", TagInstanceID: "ins-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tags (-want +got):\n%s", diff)
	}
	if tok := ClientToken("0f2a6c1e-5a6b-4a51-9d7e-1b2c3d4e5f60"); len(tok) > 64 || tok != "aipb-0f2a6c1e-5a6b-4a51-9d7e-1b2c3d4e5f60" {
		t.Errorf("ClientToken = %q", tok)
	}
}

func TestParseTags(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    map[string]string
		wantErr bool
	}{
		"empty":    {in: " ", want: map[string]string{}},
		"pairs":    {in: "a=1, b = 2,c=", want: map[string]string{"a": "1", "b": "2", "c": ""}},
		"no equal": {in: "a", wantErr: true},
		"dup":      {in: "a=1,a=2", wantErr: true},
		"reserved": {in: "edgeplane.io/cluster=x", wantErr: true},
		"legacy":   {in: "aia-official-cluster-id=x", wantErr: true},
		"no key":   {in: "=v", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTags(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tc.wantErr {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if back, _ := ParseTags(FormatTags(got)); !cmp.Equal(back, got) {
					t.Errorf("FormatTags round trip: %v", back)
				}
			}
		})
	}
}

func TestParseNodeSelector(t *testing.T) {
	sel, err := ParseNodeSelector("tke.cloud.tencent.com/need-aia-ip=true")
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set{"tke.cloud.tencent.com/need-aia-ip": "true"}) || sel.Matches(labels.Set{"tke.cloud.tencent.com/need-aia-ip": "false"}) {
		t.Error("selector does not select as expected")
	}
	for _, bad := range []string{"", "  ", "a=b=c", "!!"} {
		if _, err := ParseNodeSelector(bad); err == nil {
			t.Errorf("ParseNodeSelector(%q) accepted", bad)
		}
	}
}

const ins = "ins-node0001"

func addr(id, typ, status, instance string, tags map[string]string) tencentcloud.Address {
	return tencentcloud.Address{ID: id, Type: typ, Status: status, InstanceID: instance, IP: "198.19.0.1", Tags: tags, CreatedTime: "2026-01-01T00:00:00Z"}
}

func TestSelect(t *testing.T) {
	base := Binding{UID: "u1", NodeName: "n1", InstanceID: ins, AddressType: "AnycastEIP", Cluster: "c1", LegacyUUID: "legacy-uuid"}
	owned := addr("eip-owned001", "AnycastEIP", "UNBIND", "", map[string]string{TagCluster: "c1", TagOwnerUID: "u1"})
	legacyBound := addr("eip-legacy01", "AnycastEIP", "BIND", ins, map[string]string{networkingv1alpha1.LegacyTagClusterUUID: "legacy-uuid", networkingv1alpha1.LegacyTagNodeName: "n1"})
	legacyUnbound := addr("eip-legacy02", "AnycastEIP", "UNBIND", "", legacyBound.Tags)
	foreign := addr("eip-foreign1", "EIP", "BIND", ins, nil)
	prev := addr("eip-previous", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c1", TagOwnerUID: "old", TagNodeName: "n1"})
	spec := addr("eip-spec0001", "AnycastEIP", "UNBIND", "", nil)
	specElsewhere := addr("eip-spec0001", "AnycastEIP", "BIND", "ins-other001", nil)
	specEIP := addr("eip-spec0001", "EIP", "UNBIND", "", nil)
	withSpec := base
	withSpec.SpecAddress = "eip-spec0001"
	// The node's annotation names an address bound to its instance: this
	// cluster's under another node name, a person's, another cluster's, a
	// PodElasticIP's of this cluster, or (with the legacy ConfigMap gone)
	// the legacy controller's.
	annotated := func(id string) Binding { b := base; b.NodeAnnotation = id; return b }
	renamed := addr("eip-renamed1", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c1", TagOwnerKind: OwnerKind, TagOwnerUID: "old", TagNodeName: "n-old"})
	persons := addr("eip-persons1", "AnycastEIP", "BIND", ins, map[string]string{"Name": "mine"})
	otherCluster := addr("eip-othercl1", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c2", TagOwnerKind: OwnerKind, TagNodeName: "n-old"})
	podEIP := addr("eip-podeip01", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c1", TagOwnerKind: "PodElasticIP"})
	withAnn := annotated("eip-legacy01")
	withAnn.LegacyUUID = ""
	legacyOtherNode := addr("eip-legacy01", "AnycastEIP", "BIND", ins, map[string]string{networkingv1alpha1.LegacyTagClusterUUID: "legacy-uuid", networkingv1alpha1.LegacyTagNodeName: "n-old"})
	legacyEIP := legacyBound
	legacyEIP.Type = "EIP"
	p := func(a tencentcloud.Address) *tencentcloud.Address { return &a }

	cases := map[string]struct {
		b          Binding
		c          Candidates
		wantID     string
		wantAdopt  string
		wantReason string
	}{
		"nothing: allocate":                             {b: base},
		"owned wins over everything":                    {b: base, c: Candidates{Owned: []tencentcloud.Address{owned}, OnInstance: []tencentcloud.Address{foreign}}, wantID: owned.ID},
		"legacy bound adopted":                          {b: base, c: Candidates{OnInstance: []tencentcloud.Address{legacyBound}}, wantID: legacyBound.ID, wantAdopt: networkingv1alpha1.AdoptedLegacy},
		"legacy bound of another type":                  {b: base, c: Candidates{OnInstance: []tencentcloud.Address{legacyEIP}}, wantReason: networkingv1alpha1.AnycastReasonAddressTypeMismatch},
		"legacy unbound adopted":                        {b: base, c: Candidates{Legacy: []tencentcloud.Address{legacyUnbound}}, wantID: legacyUnbound.ID, wantAdopt: networkingv1alpha1.AdoptedLegacy},
		"annotation: this cluster's, another node name": {b: annotated(renamed.ID), c: Candidates{OnInstance: []tencentcloud.Address{renamed}}, wantID: renamed.ID, wantAdopt: networkingv1alpha1.AdoptedAnnotation},
		"annotation: the legacy controller's, another node name": {b: annotated(legacyOtherNode.ID), c: Candidates{OnInstance: []tencentcloud.Address{legacyOtherNode}},
			wantID: legacyOtherNode.ID, wantAdopt: networkingv1alpha1.AdoptedAnnotation},
		"annotation: a person's":                      {b: annotated(persons.ID), c: Candidates{OnInstance: []tencentcloud.Address{persons}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"annotation: another cluster's":               {b: annotated(otherCluster.ID), c: Candidates{OnInstance: []tencentcloud.Address{otherCluster}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"annotation: a PodElasticIP's":                {b: annotated(podEIP.ID), c: Candidates{OnInstance: []tencentcloud.Address{podEIP}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"annotation: legacy tags, the ConfigMap gone": {b: withAnn, c: Candidates{OnInstance: []tencentcloud.Address{legacyOtherNode}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"previous binding adopted":                    {b: base, c: Candidates{OnInstance: []tencentcloud.Address{prev}}, wantID: prev.ID, wantAdopt: AdoptedPrevious},
		"foreign public IP blocks":                    {b: base, c: Candidates{OnInstance: []tencentcloud.Address{foreign}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"foreign blocks legacy unbound":               {b: base, c: Candidates{OnInstance: []tencentcloud.Address{foreign}, Legacy: []tencentcloud.Address{legacyUnbound}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"spec adopted":                                {b: withSpec, c: Candidates{Spec: p(spec)}, wantID: spec.ID, wantAdopt: networkingv1alpha1.AdoptedSpec},
		"spec missing":                                {b: withSpec, wantReason: networkingv1alpha1.AnycastReasonAddressNotFound},
		"spec bound elsewhere":                        {b: withSpec, c: Candidates{Spec: p(specElsewhere)}, wantReason: networkingv1alpha1.AnycastReasonAddressInUse},
		"spec of another type":                        {b: withSpec, c: Candidates{Spec: p(specEIP)}, wantReason: networkingv1alpha1.AnycastReasonAddressTypeMismatch},
		"spec but instance has another one":           {b: withSpec, c: Candidates{Spec: p(spec), OnInstance: []tencentcloud.Address{foreign}}, wantReason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP},
		"spec already bound here":                     {b: withSpec, c: Candidates{Spec: p(addr("eip-spec0001", "AnycastEIP", "BIND", ins, nil)), OnInstance: []tencentcloud.Address{addr("eip-spec0001", "AnycastEIP", "BIND", ins, nil)}}, wantID: spec.ID, wantAdopt: networkingv1alpha1.AdoptedSpec},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Select(tc.b, tc.c)
			gotID := ""
			if v.Address != nil {
				gotID = v.Address.ID
			}
			if gotID != tc.wantID || v.Adopted != tc.wantAdopt || v.Reason != tc.wantReason {
				t.Errorf("Select = {%q adopted %q reason %q (%s)}, want {%q %q %q}", gotID, v.Adopted, v.Reason, v.Message, tc.wantID, tc.wantAdopt, tc.wantReason)
			}
			if v.Blocked() != (tc.wantReason != "") || (v.Blocked() && v.Message == "") {
				t.Errorf("Blocked/Message inconsistent: %+v", v)
			}
		})
	}
}

func TestReleasable(t *testing.T) {
	b := Binding{UID: "u1", NodeName: "n1", InstanceID: ins, Cluster: "c1", LegacyUUID: "legacy-uuid"}
	withSpec := b
	withSpec.SpecAddress = "eip-spec0001"
	annotated := b
	annotated.NodeAnnotation = "eip-persons1"
	noLegacy := b
	noLegacy.LegacyUUID = ""
	legacyTags := map[string]string{networkingv1alpha1.LegacyTagClusterUUID: "legacy-uuid", networkingv1alpha1.LegacyTagNodeName: "n1"}
	cases := map[string]struct {
		b    Binding
		a    tencentcloud.Address
		want bool
	}{
		"allocated by this binding":           {b: b, a: addr("eip-owned001", "AnycastEIP", "BIND", ins, Tags(TagInput{Cluster: "c1", OwnerUID: "u1", NodeName: "n1", InstanceID: ins})), want: true},
		"allocated by an earlier binding":     {b: b, a: addr("eip-previous", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c1", TagOwnerUID: "old", TagNodeName: "n1"}), want: true},
		"the legacy controller's":             {b: b, a: addr("eip-legacy01", "AnycastEIP", "BIND", ins, legacyTags), want: true},
		"legacy tags, no ConfigMap":           {b: noLegacy, a: addr("eip-legacy01", "AnycastEIP", "BIND", ins, legacyTags)},
		"named by spec.addressID":             {b: withSpec, a: addr("eip-spec0001", "AnycastEIP", "BIND", ins, nil), want: true},
		"named by the node's annotation only": {b: annotated, a: addr("eip-persons1", "AnycastEIP", "BIND", ins, map[string]string{"Name": "mine"})},
		"another cluster's":                   {b: b, a: addr("eip-othercl1", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c2", TagOwnerUID: "u1", TagOwnerKind: OwnerKind})},
		"a PodElasticIP's of this cluster":    {b: b, a: addr("eip-podeip01", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c1", TagOwnerKind: "PodElasticIP"})},
		"untagged":                            {b: b, a: addr("eip-persons1", "AnycastEIP", "UNBIND", "", nil)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Releasable(tc.b, tc.a); got != tc.want {
				t.Fatalf("Releasable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSteps(t *testing.T) {
	cases := []struct {
		status, instance string
		bind, del        Step
	}{
		{"CREATING", "", StepWait, StepWait},
		{"UNBIND", "", StepAssociate, StepRelease},
		{"BINDING", ins, StepWait, StepWait},
		{"BIND", ins, StepNone, StepDisassociate},
		{"BIND_ENI", ins, StepNone, StepDisassociate},
		{"BIND", "ins-other001", StepBlocked, StepForget},
		{"UNBINDING", ins, StepWait, StepWait},
		{"OFFLINING", "", StepWait, StepWait},
	}
	for _, tc := range cases {
		a := addr("eip-00000001", "AnycastEIP", tc.status, tc.instance, nil)
		if got := BindStep(a, ins); got != tc.bind {
			t.Errorf("BindStep(%s on %q) = %s, want %s", tc.status, tc.instance, got, tc.bind)
		}
		if got := DeleteStep(&a, ins, true); got != tc.del {
			t.Errorf("DeleteStep(%s on %q) = %s, want %s", tc.status, tc.instance, got, tc.del)
		}
		// An address not proven this cluster's is never touched, whatever
		// its state.
		if got := DeleteStep(&a, ins, false); got != StepNotOurs {
			t.Errorf("DeleteStep(%s on %q, not ours) = %s, want %s", tc.status, tc.instance, got, StepNotOurs)
		}
	}
	if got := DeleteStep(nil, ins, false); got != StepNone {
		t.Errorf("DeleteStep(nil) = %s", got)
	}
	if IsBound(nil, ins) || IsBound(&tencentcloud.Address{Status: "BIND", InstanceID: ins}, "") {
		t.Error("IsBound accepted a missing address or instance")
	}
}

// TestMarks: the node patch a binding's wish becomes (Marks, sent with the
// shared nodepatch.Ops) touches only the no-aia-ip taint and the two legacy
// annotations, untaints and annotates in one patch, corrects a stale
// annotation, guards every removal with a test of the exact value, and
// leaves an address someone else recorded on the node alone.
func TestMarks(t *testing.T) {
	other := corev1.Taint{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule}
	ours := Taint()
	mk := func(taints []corev1.Taint, ann map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: ann}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	idPath := "/metadata/annotations/tke.cloud.tencent.com~1anycast-ip-id"
	ipPath := "/metadata/annotations/tke.cloud.tencent.com~1anycast-ip-address"
	cases := map[string]struct {
		node *corev1.Node
		want NodeWant
		ops  []nodepatch.Op
	}{
		"taint a bare node": {node: mk(nil, nil), want: NodeWant{Tainted: true},
			ops: []nodepatch.Op{{Op: "add", Path: "/spec/taints", Value: []corev1.Taint{ours}}}},
		"append to other taints": {node: mk([]corev1.Taint{other}, nil), want: NodeWant{Tainted: true},
			ops: []nodepatch.Op{{Op: "add", Path: "/spec/taints/-", Value: ours}}},
		"already tainted":   {node: mk([]corev1.Taint{other, ours}, nil), want: NodeWant{Tainted: true}},
		"nothing to remove": {node: mk([]corev1.Taint{other}, nil), want: NodeWant{}},
		"bound: untaint and annotate in one patch": {node: mk([]corev1.Taint{other, ours}, nil), want: NodeWant{AddressID: "eip-1", PublicIP: "1.2.3.4"},
			ops: []nodepatch.Op{
				{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}},
				{Op: "add", Path: ipPath, Value: "1.2.3.4"},
				{Op: "add", Path: idPath, Value: "eip-1"},
				{Op: "test", Path: "/spec/taints/1", Value: ours},
				{Op: "remove", Path: "/spec/taints/1"},
			}},
		"stale annotation corrected": {node: mk(nil, map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-old", networkingv1alpha1.LegacyAnnotationAnycastIPAddress: "1.2.3.4"}), want: NodeWant{AddressID: "eip-1", PublicIP: "1.2.3.4"},
			ops: []nodepatch.Op{{Op: "add", Path: idPath, Value: "eip-1"}}},
		"clear ours": {node: mk([]corev1.Taint{ours}, map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-1", networkingv1alpha1.LegacyAnnotationAnycastIPAddress: "1.2.3.4", "x": "y"}),
			want: NodeWant{ClearAnnotations: true, ClearAddressID: "eip-1"},
			ops: []nodepatch.Op{
				{Op: "test", Path: ipPath, Value: "1.2.3.4"}, {Op: "remove", Path: ipPath},
				{Op: "test", Path: idPath, Value: "eip-1"}, {Op: "remove", Path: idPath},
				{Op: "test", Path: "/spec/taints/0", Value: ours}, {Op: "remove", Path: "/spec/taints/0"},
			}},
		"clear leaves someone else's address": {node: mk(nil, map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-2"}),
			want: NodeWant{ClearAnnotations: true, ClearAddressID: "eip-1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := nodepatch.Ops(tc.node, Marks(tc.node, tc.want))
			// Compare through JSON: that is what goes on the wire.
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(tc.ops)
			if len(tc.ops) == 0 && len(got) == 0 {
				return
			}
			if string(gb) != string(wb) {
				t.Errorf("patch =\n%s\nwant\n%s", gb, wb)
			}
		})
	}
}

func TestNeedsTaintAtAdmission(t *testing.T) {
	sel, _ := ParseNodeSelector("tke.cloud.tencent.com/need-aia-ip=true")
	lbl := map[string]string{"tke.cloud.tencent.com/need-aia-ip": "true"}
	cases := map[string]struct {
		node *corev1.Node
		want bool
	}{
		"labelled new node": {node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: lbl}}, want: true},
		"unlabelled":        {node: &corev1.Node{}},
		"already tainted":   {node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: lbl}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{Taint()}}}},
		"bound (annotated)": {node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: lbl, Annotations: map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-1"}}}},
	}
	for name, tc := range cases {
		if got := NeedsTaintAtAdmission(tc.node, sel); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}

func TestSweep(t *testing.T) {
	ours := addr("eip-00000001", "AnycastEIP", "BIND", ins, map[string]string{TagCluster: "c1", TagOwnerUID: "u1", TagNodeName: "n1", TagInstanceID: ins})
	rebound := addr("eip-00000002", "AnycastEIP", "BIND", "ins-other001", map[string]string{TagCluster: "c1", TagOwnerUID: "u2", TagNodeName: "n2", TagInstanceID: ins})
	legacy := addr("eip-00000003", "AnycastEIP", "UNBIND", "", map[string]string{networkingv1alpha1.LegacyTagClusterUUID: "lu", networkingv1alpha1.LegacyTagNodeName: "n3"})
	other := addr("eip-00000004", "AnycastEIP", "UNBIND", "", map[string]string{TagCluster: "c2", TagOwnerUID: "u4"})
	kept := addr("eip-00000005", "AnycastEIP", "UNBIND", "", Tags(TagInput{Cluster: "c1", OwnerUID: "u5", NodeName: "n5", Orphan: true}))
	if o := SweepObject(kept, "c1", "lu"); o.ReportOnly == "" || !o.HasClusterIdentity {
		t.Errorf("an address kept by its management policies is deletable: %+v", o)
	}

	objs := map[string]orphan.CloudObject{}
	for _, a := range []tencentcloud.Address{ours, rebound, legacy, other} {
		objs[a.ID] = SweepObject(a, "c1", "lu")
	}
	if o := objs[ours.ID]; !o.HasClusterIdentity || o.OwnerUID != "u1" || o.ReportOnly != "" || o.CreatedAt.IsZero() {
		t.Errorf("ours: %+v", o)
	}
	if o := objs[rebound.ID]; o.ReportOnly == "" {
		t.Errorf("rebound address is deletable: %+v", o)
	}
	if o := objs[legacy.ID]; o.HasClusterIdentity || o.OwnerUID != types.UID(LegacyOwnerPrefix+"n3") {
		t.Errorf("legacy: %+v", o)
	}
	if o := objs[other.ID]; o.HasClusterIdentity {
		t.Errorf("another cluster's address has our identity: %+v", o)
	}

	listed := []tencentcloud.Address{ours, rebound, legacy}
	owners := SweepOwners(listed, sets.New[types.UID]("live"), sets.New("eip-00000002"), sets.New("n1", "n3"), "lu")
	want := sets.New[types.UID]("live", "u1", "u2", types.UID(LegacyOwnerPrefix+"n3"))
	if !owners.Equal(want) {
		t.Errorf("owners = %v, want %v", sets.List(owners), sets.List(want))
	}
	if got := SweepOwners(listed, nil, nil, nil, "lu"); got.Len() != 0 {
		t.Errorf("no bindings and no nodes: owners = %v", sets.List(got))
	}
}

// TestSafeOnStale: which of a binding's node patches may be sent as
// computed from a cached copy (nodepatch.SafeOnStale): those that set
// single annotations, append the taint (the API server refuses a second
// one) or remove with a test of the exact value; not those that add a
// whole annotation map or taint list.
func TestSafeOnStale(t *testing.T) {
	tainted := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"other": "x"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "other", Effect: corev1.TaintEffectNoExecute}, Taint()}}}
	bare := &corev1.Node{}
	annotated := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-1", networkingv1alpha1.LegacyAnnotationAnycastIPAddress: "1.2.3.4"}}}
	withTaints := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "other"}}}}
	bound := NodeWant{AddressID: "eip-1", PublicIP: "1.2.3.4"}
	ops := func(n *corev1.Node, w NodeWant) []nodepatch.Op { return nodepatch.Ops(n, Marks(n, w)) }
	for _, tc := range []struct {
		name string
		ops  []nodepatch.Op
		want bool
	}{
		{"untaint and annotate a node with annotations", ops(tainted, bound), true},
		{"annotate a node without annotations (adds the map)", ops(bare, bound), false},
		{"taint a node without taints (adds the list)", ops(bare, NodeWant{Tainted: true}), false},
		{"taint a node with taints (appends one)", ops(withTaints, NodeWant{Tainted: true}), true},
		{"clear annotations (removals guarded)", ops(annotated, NodeWant{ClearAnnotations: true}), true},
		{"nothing to do", nil, false},
		{"replace", []nodepatch.Op{{Op: "replace", Path: "/metadata/annotations/a", Value: "b"}}, false},
		{"remove guarded by a test of another path", []nodepatch.Op{{Op: "test", Path: "/spec/taints/0"}, {Op: "remove", Path: "/spec/taints/1"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nodepatch.SafeOnStale(tc.ops); got != tc.want {
				t.Errorf("SafeOnStale(%v) = %v, want %v", tc.ops, got, tc.want)
			}
		})
	}
}

func TestTaskOverdue(t *testing.T) {
	const poll = time.Second
	now := time.Date(2026, 11, 21, 12, 0, 10, 500_000_000, time.UTC)
	cases := []struct {
		name    string
		started time.Time
		want    bool
	}{
		{"precise, just started", now.Add(-100 * time.Millisecond), false},
		{"precise, one poll", now.Add(-poll), false},
		{"precise, two polls", now.Add(-2 * poll), true},
		// 12:00:08 read back may have been 12:00:08.999: 1.5 s, not 2.5 s.
		{"whole seconds, within two polls of the end of its second", time.Date(2026, 11, 21, 12, 0, 8, 0, time.UTC), false},
		{"whole seconds, two polls after the end of its second", time.Date(2026, 11, 21, 12, 0, 7, 0, time.UTC), true},
		{"unknown start", time.Time{}, true},
	}
	for _, tc := range cases {
		if got := TaskOverdue(tc.started, now, poll); got != tc.want {
			t.Errorf("%s: TaskOverdue(%s) = %v, want %v", tc.name, tc.started.Format(time.RFC3339Nano), got, tc.want)
		}
	}
}
