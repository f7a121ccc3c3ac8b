package ipam

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestParseRange(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    string
		size    int64
		wantErr bool
	}{
		"single":          {in: "10.0.0.5", want: "10.0.0.5", size: 1},
		"tilde range":     {in: "10.0.0.5~10.0.0.9", want: "10.0.0.5~10.0.0.9", size: 5},
		"cidr":            {in: "10.0.1.0/30", want: "10.0.1.0~10.0.1.3", size: 4},
		"unmasked cidr":   {in: "10.0.1.1/30", want: "10.0.1.0~10.0.1.3", size: 4},
		"ipv6 range":      {in: "fd00::1~fd00::ff", want: "fd00::1~fd00::ff", size: 255},
		"ipv6 cidr":       {in: "fd00::/126", want: "fd00::~fd00::3", size: 4},
		"mapped v4":       {in: "::ffff:10.0.0.1", want: "10.0.0.1", size: 1},
		"reversed":        {in: "10.0.0.9~10.0.0.5", wantErr: true},
		"mixed families":  {in: "10.0.0.1~fd00::1", wantErr: true},
		"garbage":         {in: "ten", wantErr: true},
		"bad cidr":        {in: "10.0.0.0/33", wantErr: true},
		"empty end":       {in: "10.0.0.1~", wantErr: true},
		"zone":            {in: "fe80::1%eth0", wantErr: true},
		"spaces trimmed":  {in: " 10.0.0.5 ~ 10.0.0.6 ", want: "10.0.0.5~10.0.0.6", size: 2},
		"whole ipv4 /0":   {in: "0.0.0.0/0", want: "0.0.0.0~255.255.255.255", size: 1 << 32},
		"huge ipv6 range": {in: "::/0", want: "::~ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", size: int64(^uint64(0) >> 1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := ParseRange(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if r.String() != tc.want || r.Size() != tc.size {
				t.Fatalf("got %s size %d, want %s size %d", r, r.Size(), tc.want, tc.size)
			}
		})
	}
}

func TestParseSet(t *testing.T) {
	cases := map[string]struct {
		ranges, excludes []string
		want             []string
		wantErr          bool
	}{
		"sorted and excluded": {
			ranges:   []string{"10.0.0.20~10.0.0.30", "10.0.0.2~10.0.0.5"},
			excludes: []string{"10.0.0.3", "10.0.0.25~10.0.0.40"},
			want:     []string{"10.0.0.2", "10.0.0.4~10.0.0.5", "10.0.0.20~10.0.0.24"},
		},
		"exclude all":  {ranges: []string{"10.0.0.1/30"}, excludes: []string{"10.0.0.0/24"}, want: nil},
		"overlap":      {ranges: []string{"10.0.0.1~10.0.0.5", "10.0.0.5"}, wantErr: true},
		"bad exclude":  {ranges: []string{"10.0.0.1"}, excludes: []string{"x"}, wantErr: true},
		"adjacent ok":  {ranges: []string{"10.0.0.1~10.0.0.5", "10.0.0.6"}, want: []string{"10.0.0.1~10.0.0.5", "10.0.0.6"}},
		"exclude edge": {ranges: []string{"10.0.0.1~10.0.0.5"}, excludes: []string{"10.0.0.1", "10.0.0.5"}, want: []string{"10.0.0.2~10.0.0.4"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := ParseSet(tc.ranges, tc.excludes)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			var got []string
			for _, r := range s {
				got = append(got, r.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("set (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetContainsAndOverlap(t *testing.T) {
	s, err := ParseSet([]string{"10.0.0.2~10.0.0.5", "10.0.0.20~10.0.0.30"}, []string{"10.0.0.25"})
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]bool{"10.0.0.1": false, "10.0.0.2": true, "10.0.0.5": true, "10.0.0.6": false, "10.0.0.25": false, "10.0.0.30": true, "fd00::1": false} {
		if got := s.Contains(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", ip, got, want)
		}
	}
	if s.Size() != 4+10 {
		t.Errorf("Size = %d, want 14", s.Size())
	}
	o, _ := ParseSet([]string{"10.0.0.28~10.0.0.40"}, nil)
	if r, ok := s.Overlap(o); !ok || r.String() != "10.0.0.28~10.0.0.30" {
		t.Errorf("Overlap = %v %v, want 10.0.0.28~10.0.0.30", r, ok)
	}
	n, _ := ParseSet([]string{"10.0.0.31~10.0.0.40"}, nil)
	if _, ok := s.Overlap(n); ok {
		t.Errorf("disjoint sets overlap")
	}
	var seen []string
	s.Intersect(Range{First: netip.MustParseAddr("10.0.0.4"), Last: netip.MustParseAddr("10.0.0.21")}).Each(func(a netip.Addr) bool {
		seen = append(seen, a.String())
		return true
	})
	if diff := cmp.Diff([]string{"10.0.0.4", "10.0.0.5", "10.0.0.20", "10.0.0.21"}, seen); diff != "" {
		t.Errorf("Intersect/Each (-want +got):\n%s", diff)
	}
}

func TestNameForIP(t *testing.T) {
	cases := map[string]string{
		"10.0.0.5":        "10-0-0-5",
		"fd00::5":         "fd00-0000-0000-0000-0000-0000-0000-0005",
		"::1":             "0000-0000-0000-0000-0000-0000-0000-0001",
		"::ffff:10.0.0.5": "10-0-0-5",
	}
	for ip, want := range cases {
		a := netip.MustParseAddr(ip)
		got := NameForIP(a)
		if got != want {
			t.Errorf("NameForIP(%s) = %s, want %s", ip, got, want)
		}
		back, err := IPForName(got)
		if err != nil || back != a.Unmap() {
			t.Errorf("IPForName(%s) = %v, %v; want %s", got, back, err, a.Unmap())
		}
	}
	for _, bad := range []string{"10-0-0", "a-b-c-d", "010-0-0-5", "fd00--5", "10.0.0.5"} {
		if _, err := IPForName(bad); err == nil {
			t.Errorf("IPForName(%q) succeeded", bad)
		}
	}
}

func TestKeyFormatAndParse(t *testing.T) {
	cases := map[string]struct {
		key         Key
		str         string
		reservation string
		appType     AppType
	}{
		"deployment": {
			key: Key{TypePrefix: PrefixDeployment, Namespace: "ns1", AppName: "web", PodName: "web-5d8f-abcde"},
			str: "dp_ns1_web_web-5d8f-abcde", reservation: "dp_ns1_web_", appType: AppDeployment,
		},
		"statefulset": {
			key: Key{TypePrefix: PrefixStatefulSet, Namespace: "ns1", AppName: "db", PodName: "db-0"},
			str: "sts_ns1_db_db-0", reservation: "sts_ns1_db_", appType: AppStatefulSet,
		},
		"custom kind": {
			key: Key{TypePrefix: "tapp_", Namespace: "ns1", AppName: "demo", PodName: "demo-1"},
			str: "tapp_ns1_demo_demo-1", reservation: "tapp_ns1_demo_", appType: "tapp",
		},
		"no owner": {
			key: Key{TypePrefix: PrefixNoOwner, Namespace: "ns1", AppName: "NULL", PodName: "solo"},
			str: "NULL_ns1_NULL_solo", reservation: "NULL_ns1_NULL_", appType: AppNone,
		},
		"pool pod": {
			key: Key{Pool: "shared", TypePrefix: PrefixDeployment, Namespace: "ns1", AppName: "web", PodName: "web-abc"},
			str: "pool__shared_dp_ns1_web_web-abc", reservation: "pool__shared_", appType: AppDeployment,
		},
		"deployment reservation": {
			key: Key{TypePrefix: PrefixDeployment, Namespace: "ns1", AppName: "web"},
			str: "dp_ns1_web_", reservation: "dp_ns1_web_", appType: AppDeployment,
		},
		"pool reservation": {
			key: Key{Pool: "shared"}, str: "pool__shared_", reservation: "pool__shared_", appType: AppNone,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.key.String(); got != tc.str {
				t.Fatalf("String() = %q, want %q", got, tc.str)
			}
			parsed, err := ParseKey(tc.str)
			if err != nil {
				t.Fatalf("ParseKey: %v", err)
			}
			if diff := cmp.Diff(tc.key, parsed); diff != "" {
				t.Fatalf("ParseKey (-want +got):\n%s", diff)
			}
			if got := parsed.ReservationKey(); got != tc.reservation {
				t.Fatalf("ReservationKey() = %q, want %q", got, tc.reservation)
			}
			if got := parsed.AppType(); got != tc.appType {
				t.Fatalf("AppType() = %q, want %q", got, tc.appType)
			}
		})
	}
	for _, bad := range []string{"", "dp_ns", "dp_ns_web", "pool__", "pool___dp_a_b_c", "dp__web_x", "a_b_c_d_e"} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) succeeded", bad)
		}
	}
}

func TestPodOwnerAndKey(t *testing.T) {
	ctl := func(kind, name string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, Controller: ptr.To(true)}}
	}
	cases := map[string]struct {
		refs []metav1.OwnerReference
		pool string
		want string
	}{
		"replicaset":        {refs: ctl("ReplicaSet", "web-5d8f9c"), want: "dp_ns1_web_p"},
		"hyphenated deploy": {refs: ctl("ReplicaSet", "my-web-5d8f9c"), want: "dp_ns1_my-web_p"},
		"statefulset":       {refs: ctl("StatefulSet", "db"), want: "sts_ns1_db_p"},
		"tapp":              {refs: ctl("TApp", "demo"), want: "tapp_ns1_demo_p"},
		"none":              {want: "NULL_ns1_NULL_p"},
		"non-controller":    {refs: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "db"}}, want: "sts_ns1_db_p"},
		"pool":              {refs: ctl("ReplicaSet", "web-5d8f9c"), pool: "shared", want: "pool__shared_dp_ns1_web_p"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns1", OwnerReferences: tc.refs}}
			if got := KeyFor("ns1", "p", PodOwner(pod), tc.pool).String(); got != tc.want {
				t.Fatalf("key = %q, want %q", got, tc.want)
			}
		})
	}
}

func fipPod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns1", Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
			Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
		}}}},
	}
}

func TestParseRequest(t *testing.T) {
	cases := map[string]struct {
		pod        *corev1.Pod
		wantPolicy networkingv1alpha1.ReleasePolicy
		wantPool   string
		wantSlots  int
		wantErr    string
	}{
		"no resource":           {pod: &corev1.Pod{}, wantErr: "does not request"},
		"default":               {pod: fipPod(nil), wantSlots: 1},
		"immutable":             {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"}), wantPolicy: networkingv1alpha1.ReleasePolicyImmutable, wantSlots: 1},
		"never":                 {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "never"}), wantPolicy: networkingv1alpha1.ReleasePolicyNever, wantSlots: 1},
		"explicit empty policy": {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationReleasePolicy: ""}), wantSlots: 1},
		"unknown policy":        {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "Immutable"}), wantErr: "want \"\", \"immutable\" or \"never\""},
		"pool forces never": {
			pod:        fipPod(map[string]string{networkingv1alpha1.AnnotationENIIPPool: "shared", networkingv1alpha1.AnnotationReleasePolicy: "immutable"}),
			wantPolicy: networkingv1alpha1.ReleasePolicyNever, wantPool: "shared", wantSlots: 1,
		},
		"pool with underscore": {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationENIIPPool: "a_b"}), wantErr: "without \"_\""},
		"multi ip": {
			pod:       fipPod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[["10.0.0.200~10.0.0.238"],["10.0.0.2~10.0.0.30"],["10.0.0.60~10.0.0.80","10.0.0.90"]]}`}),
			wantSlots: 3,
		},
		"bad json":     {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":`}), wantErr: "not valid JSON"},
		"bad range":    {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[["10.0.0.9~10.0.0.1"]]}`}), wantErr: "ends before it starts"},
		"empty slot":   {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":[[]]}`}), wantErr: "is empty"},
		"wrong type":   {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"request_ip_range":"10.0.0.1"}`}), wantErr: "not valid JSON"},
		"only ipinfos": {pod: fipPod(map[string]string{networkingv1alpha1.AnnotationCNIArgs: `{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":0,"gateway":"10.0.0.1"}]}}`}), wantSlots: 1},
		"limit only": {pod: func() *corev1.Pod {
			p := fipPod(nil)
			p.Spec.Containers[0].Resources.Requests = nil
			return p
		}(), wantSlots: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := ParseRequest(tc.pod)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if r.Policy != tc.wantPolicy || r.Pool != tc.wantPool || r.Slots() != tc.wantSlots {
				t.Fatalf("got policy %q pool %q slots %d, want %q %q %d", r.Policy, r.Pool, r.Slots(), tc.wantPolicy, tc.wantPool, tc.wantSlots)
			}
		})
	}
}

// TestCNIArgsFormat pins the annotation to galaxy's exact bytes (the seed's example).
func TestCNIArgsFormat(t *testing.T) {
	in := `{"request_ip_range":[["10.0.0.200~10.0.0.238"],["10.0.0.2~10.0.0.30"],["10.0.0.60~10.0.0.80"]]}`
	a, err := ParseCNIArgs(in)
	if err != nil {
		t.Fatal(err)
	}
	subnet := netip.MustParsePrefix("10.0.0.0/24")
	for _, ip := range []string{"10.0.0.200", "10.0.0.2", "10.0.0.60"} {
		a.Common.IPInfos = append(a.Common.IPInfos, NewIPInfo(netip.MustParseAddr(ip), subnet, "10.0.0.1", 0))
	}
	got, err := a.Format()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"request_ip_range":[["10.0.0.200~10.0.0.238"],["10.0.0.2~10.0.0.30"],["10.0.0.60~10.0.0.80"]],` +
		`"common":{"ipinfos":[{"ip":"10.0.0.200/24","vlan":0,"gateway":"10.0.0.1"},{"ip":"10.0.0.2/24","vlan":0,"gateway":"10.0.0.1"},{"ip":"10.0.0.60/24","vlan":0,"gateway":"10.0.0.1"}]}}`
	if got != want {
		t.Fatalf("Format() =\n%s\nwant\n%s", got, want)
	}
	single, _ := CNIArgs{Common: CommonCNIArgs{IPInfos: []IPInfo{NewIPInfo(netip.MustParseAddr("10.0.0.5"), subnet, "10.0.0.1", 2)}}}.Format()
	if single != `{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":2,"gateway":"10.0.0.1"}]}}` {
		t.Fatalf("single = %s", single)
	}
	back, _ := ParseCNIArgs(single)
	if diff := cmp.Diff([]netip.Addr{netip.MustParseAddr("10.0.0.5")}, back.IPs(), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Fatalf("IPs (-want +got):\n%s", diff)
	}
}

// TestDecide covers galaxy's release table row by row.
func TestDecide(t *testing.T) {
	const (
		def = networkingv1alpha1.ReleasePolicyDefault
		imm = networkingv1alpha1.ReleasePolicyImmutable
		nev = networkingv1alpha1.ReleasePolicyNever
	)
	dp := Key{TypePrefix: PrefixDeployment, Namespace: "ns", AppName: "web", PodName: "web-abc-xyz"}
	sts := func(pod string) Key {
		return Key{TypePrefix: PrefixStatefulSet, Namespace: "ns", AppName: "db", PodName: pod}
	}
	tapp := func(pod string) Key { return Key{TypePrefix: "tapp_", Namespace: "ns", AppName: "t", PodName: pod} }
	none := Key{TypePrefix: PrefixNoOwner, Namespace: "ns", AppName: "NULL", PodName: "solo"}
	pool := Key{Pool: "shared", TypePrefix: PrefixDeployment, Namespace: "ns", AppName: "web", PodName: "web-abc-xyz"}
	live := func(n int64) Workload { return Workload{Exists: true, Replicas: n} }

	cases := map[string]struct {
		in   ReleaseInput
		want Action
	}{
		// Deployment row.
		"deployment default":                {in: ReleaseInput{Key: dp, Policy: def, Workload: live(3)}, want: ActionRelease},
		"deployment empty policy":           {in: ReleaseInput{Key: dp, Policy: "", Workload: live(3)}, want: ActionRelease},
		"deployment immutable missing":      {in: ReleaseInput{Key: dp, Policy: imm}, want: ActionRelease},
		"deployment immutable zero":         {in: ReleaseInput{Key: dp, Policy: imm, Workload: live(0)}, want: ActionRelease},
		"deployment immutable over":         {in: ReleaseInput{Key: dp, Policy: imm, Workload: live(2), HeldByPrefix: 3}, want: ActionRelease},
		"deployment immutable at replicas":  {in: ReleaseInput{Key: dp, Policy: imm, Workload: live(3), HeldByPrefix: 3}, want: ActionReserve},
		"deployment immutable under":        {in: ReleaseInput{Key: dp, Policy: imm, Workload: live(3), HeldByPrefix: 1}, want: ActionReserve},
		"deployment never":                  {in: ReleaseInput{Key: dp, Policy: nev}, want: ActionReserve},
		"deployment never live":             {in: ReleaseInput{Key: dp, Policy: nev, Workload: live(1), HeldByPrefix: 5}, want: ActionReserve},
		"pool pod is never even if default": {in: ReleaseInput{Key: pool, Policy: def}, want: ActionReserve},
		"pool pod immutable is never":       {in: ReleaseInput{Key: pool, Policy: imm}, want: ActionReserve},
		// StatefulSet row.
		"sts default":             {in: ReleaseInput{Key: sts("db-0"), Policy: def, Workload: live(3)}, want: ActionRelease},
		"sts immutable missing":   {in: ReleaseInput{Key: sts("db-0"), Policy: imm}, want: ActionRelease},
		"sts immutable below":     {in: ReleaseInput{Key: sts("db-2"), Policy: imm, Workload: live(3)}, want: ActionKeep},
		"sts immutable at index":  {in: ReleaseInput{Key: sts("db-3"), Policy: imm, Workload: live(3)}, want: ActionRelease},
		"sts immutable scaled 0":  {in: ReleaseInput{Key: sts("db-0"), Policy: imm, Workload: live(0)}, want: ActionRelease},
		"sts never":               {in: ReleaseInput{Key: sts("db-7"), Policy: nev}, want: ActionKeep},
		"sts never bad name":      {in: ReleaseInput{Key: sts("db"), Policy: nev}, want: ActionRelease},
		"custom immutable scale":  {in: ReleaseInput{Key: tapp("t-1"), Policy: imm, Workload: Workload{Exists: true, Replicas: 2, HasScale: true}}, want: ActionKeep},
		"custom immutable high":   {in: ReleaseInput{Key: tapp("t-2"), Policy: imm, Workload: Workload{Exists: true, Replicas: 2, HasScale: true}}, want: ActionRelease},
		"custom immutable noscal": {in: ReleaseInput{Key: tapp("t-1"), Policy: imm, Workload: live(2)}, want: ActionRelease},
		"custom never":            {in: ReleaseInput{Key: tapp("t-1"), Policy: nev}, want: ActionKeep},
		"custom default":          {in: ReleaseInput{Key: tapp("t-1"), Policy: def, Workload: live(2)}, want: ActionRelease},
		// Unsupported row.
		"custom bad name immutable": {in: ReleaseInput{Key: tapp("t"), Policy: imm, Workload: Workload{Exists: true, Replicas: 2, HasScale: true}}, want: ActionRelease},
		"custom bad name never":     {in: ReleaseInput{Key: tapp("t"), Policy: nev}, want: ActionRelease},
		"no owner immutable":        {in: ReleaseInput{Key: none, Policy: imm}, want: ActionRelease},
		"no owner never":            {in: ReleaseInput{Key: none, Policy: nev}, want: ActionRelease},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Decide(tc.in); got != tc.want {
				t.Fatalf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSupported(t *testing.T) {
	cases := map[string]struct {
		key      Key
		policy   networkingv1alpha1.ReleasePolicy
		hasScale bool
		want     bool
	}{
		"default anything":       {key: Key{TypePrefix: PrefixNoOwner, PodName: "x"}, policy: networkingv1alpha1.ReleasePolicyDefault, want: true},
		"deployment never":       {key: Key{TypePrefix: PrefixDeployment, PodName: "x"}, policy: networkingv1alpha1.ReleasePolicyNever, want: true},
		"no owner never":         {key: Key{TypePrefix: PrefixNoOwner, PodName: "x"}, policy: networkingv1alpha1.ReleasePolicyNever, want: false},
		"custom never indexed":   {key: Key{TypePrefix: "tapp_", PodName: "x-1"}, policy: networkingv1alpha1.ReleasePolicyNever, want: true},
		"custom never unindexed": {key: Key{TypePrefix: "tapp_", PodName: "x"}, policy: networkingv1alpha1.ReleasePolicyNever, want: false},
		"custom immutable scale": {key: Key{TypePrefix: "tapp_", PodName: "x-1"}, policy: networkingv1alpha1.ReleasePolicyImmutable, hasScale: true, want: true},
		"custom immutable none":  {key: Key{TypePrefix: "tapp_", PodName: "x-1"}, policy: networkingv1alpha1.ReleasePolicyImmutable, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got, reason := Supported(tc.key, tc.policy, tc.hasScale); got != tc.want {
				t.Fatalf("Supported = %v (%s), want %v", got, reason, tc.want)
			}
		})
	}
}

func FuzzParseCNIArgs(f *testing.F) {
	for _, s := range []string{"", `{"request_ip_range":[["10.0.0.1~10.0.0.9"]]}`, `{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":0,"gateway":"10.0.0.1"}]}}`, `{`, `[]`, `{"request_ip_range":[[]]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseCNIArgs(s)
		if err != nil {
			return
		}
		out, err := a.Format()
		if err != nil {
			t.Fatalf("Format after a successful parse: %v", err)
		}
		if _, err := ParseCNIArgs(out); err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		_ = a.IPs()
	})
}

func FuzzParseAnnotations(f *testing.F) {
	f.Add("immutable", "shared", `{"request_ip_range":[["10.0.0.1"]]}`)
	f.Add("x", "", "")
	f.Add("", "a_b", "{}")
	f.Fuzz(func(t *testing.T, policy, pool, args string) {
		r, err := ParseAnnotations(map[string]string{
			networkingv1alpha1.AnnotationReleasePolicy: policy,
			networkingv1alpha1.AnnotationENIIPPool:     pool,
			networkingv1alpha1.AnnotationCNIArgs:       args,
		})
		if err != nil {
			return
		}
		for i := 0; i < len(r.Ranges); i++ {
			_ = r.SlotAllows(i, netip.MustParseAddr("10.0.0.1"))
		}
	})
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"dp_ns_web_web-1", "pool__p_", "pool__p_sts_ns_db_db-0", "NULL_ns_NULL_x", "_", "pool__"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		if k.String() != s {
			t.Fatalf("round trip %q -> %+v -> %q", s, k, k.String())
		}
		_ = k.ReservationKey()
	})
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "10.0.0.1~10.0.0.5", "10.0.0.0/24", "fd00::/120", "::ffff:1.2.3.4/120", "a~b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		if r.Last.Less(r.First) || r.Size() < 1 {
			t.Fatalf("bad range %v from %q", r, s)
		}
		if !r.Contains(r.First) || !r.Contains(r.Last) {
			t.Fatalf("range %v does not contain its ends", r)
		}
		back, err := ParseRange(r.String())
		if err != nil || back != r {
			t.Fatalf("round trip %q -> %v -> %v (%v)", s, r, back, err)
		}
	})
}

func TestEachFromVisitsEveryAddressOnce(t *testing.T) {
	s, err := ParseSet([]string{"10.0.0.1~10.0.0.3", "10.0.0.10", "10.0.0.20~10.0.0.21"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for offset := int64(0); offset < 8; offset++ {
		var got []string
		s.EachFrom(offset, func(a netip.Addr) bool {
			got = append(got, a.String())
			return true
		})
		if len(got) != 6 {
			t.Fatalf("offset %d visited %v", offset, got)
		}
		seen := map[string]bool{}
		for _, g := range got {
			if seen[g] {
				t.Fatalf("offset %d visited %s twice: %v", offset, g, got)
			}
			seen[g] = true
		}
		if offset == 4 && got[0] != "10.0.0.20" {
			t.Fatalf("offset 4 starts at %s, want 10.0.0.20", got[0])
		}
	}
	n := 0
	s.EachFrom(2, func(netip.Addr) bool { n++; return n < 2 })
	if n != 2 {
		t.Fatalf("EachFrom did not stop: %d", n)
	}
}
