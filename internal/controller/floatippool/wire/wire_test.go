package wire

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

func TestDecodeFilterArgs(t *testing.T) {
	good, _ := json.Marshal(ExtenderArgs{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, NodeNames: &[]string{"n1"}})
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"pod and node names", string(good), ""},
		{"no pod", `{"NodeNames":["n1"]}`, "no pod"},
		{"pod without a name", `{"Pod":{"metadata":{"namespace":"ns"}}}`, "no name or namespace"},
		{"not JSON", `{`, "decoding filter request"},
		{"two bodies", string(good) + string(good), "unexpected data"},
		{"wrong type", `{"Pod":"p"}`, "decoding filter request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeFilterArgs(strings.NewReader(tc.body))
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestDecodeBindingArgs(t *testing.T) {
	for _, tc := range []struct {
		name, body, wantErr string
		want                ExtenderBindingArgs
	}{
		{"complete", `{"PodName":"p","PodNamespace":"ns","PodUID":"u","Node":"n1"}`, "", ExtenderBindingArgs{PodName: "p", PodNamespace: "ns", PodUID: "u", Node: "n1"}},
		{"no node", `{"PodName":"p","PodNamespace":"ns"}`, "required", ExtenderBindingArgs{}},
		{"empty", `{}`, "required", ExtenderBindingArgs{}},
		{"null", `null`, "required", ExtenderBindingArgs{}},
		{"array", `[]`, "decoding bind request", ExtenderBindingArgs{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeBindingArgs(strings.NewReader(tc.body))
			checkDecoded(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseListQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  ListQuery
	}{
		{"", ListQuery{Key: ipam.QueryKey(ipam.PrefixStatefulSet, "", "", "", ""), Size: DefaultSize}},
		{"keyword=web&page=2&size=5&sort=ip+desc", ListQuery{Key: "web", Fuzzy: true, Page: 2, Size: 5, Sort: "ip desc"}},
		{"appType=deployment&namespace=ns&appName=web", ListQuery{Key: ipam.QueryKey(ipam.PrefixDeployment, "ns", "web", "", ""), Namespace: "ns", Size: DefaultSize}},
		{"page=-1&size=0", ListQuery{Key: ipam.QueryKey(ipam.PrefixStatefulSet, "", "", "", ""), Size: DefaultSize}},
		{"page=1000000&size=1000000", ListQuery{Key: ipam.QueryKey(ipam.PrefixStatefulSet, "", "", "", ""), Page: MaxPage, Size: MaxSize}},
		{"page=x&size=y", ListQuery{Key: ipam.QueryKey(ipam.PrefixStatefulSet, "", "", "", ""), Size: DefaultSize}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ParseListQuery(q)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeReleaseRequest(t *testing.T) {
	got, err := DecodeReleaseRequest(strings.NewReader(`{"ips":[{"ip":"::ffff:10.0.0.1","namespace":"ns","appName":"web","podName":"web-0"},{"ip":"10.0.0.2","appType":"deployment","namespace":"ns","appName":"api"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []ReleaseItem{
		{IP: netip.MustParseAddr("10.0.0.1"), Key: ipam.QueryKey(ipam.PrefixStatefulSet, "ns", "web", "web-0", ""), Namespace: "ns"},
		{IP: netip.MustParseAddr("10.0.0.2"), Key: ipam.QueryKey(ipam.PrefixDeployment, "ns", "api", "", ""), Namespace: "ns"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for body, wantErr := range map[string]string{
		`{"ips":[{"ip":"10.0.0.300"}]}`: "not a valid ip",
		`{"ips":[{"ip":""}]}`:           "not a valid ip",
		`{"ips":{}}`:                    "cannot unmarshal",
		`{"ips":[]} {}`:                 "unexpected data",
	} {
		_, err := DecodeReleaseRequest(strings.NewReader(body))
		checkErr(t, err, wantErr)
	}
	var many bytes.Buffer
	many.WriteString(`{"ips":[`)
	for i := range MaxReleaseItems + 1 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`{"ip":"10.0.0.1"}`)
	}
	many.WriteString(`]}`)
	_, err = DecodeReleaseRequest(&many)
	checkErr(t, err, "at most")
}

func TestDecodePoolRequest(t *testing.T) {
	for _, tc := range []struct {
		body, wantErr string
		want          Pool
	}{
		{`{"name":"pool-a","size":3,"preAllocateIP":true}`, "", Pool{Name: "pool-a", Size: 3, PreAllocateIP: true}},
		{`{"name":"pool_a","size":3}`, "contains", Pool{}},
		{`{"size":3}`, "empty", Pool{}},
		{`{"name":"Pool","size":3}`, "RFC 1123", Pool{}},
		{`{"name":"a","size":-1}`, "not within", Pool{}},
		{`{"name":"a","size":4096}`, "", Pool{Name: "a", Size: 4096}},
		{`{"name":"a","size":4097}`, "not within", Pool{}},
		// Every free IP of every pool, reserved by one request.
		{`{"name":"a","size":1073741824,"preAllocateIP":true}`, "not within", Pool{}},
		{`{"name":"a","size":1.5}`, "cannot unmarshal", Pool{}},
	} {
		t.Run(tc.body, func(t *testing.T) {
			got, err := DecodePoolRequest(strings.NewReader(tc.body))
			checkDecoded(t, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestPoolNameFromPath(t *testing.T) {
	for path, want := range map[string]string{"/v1/pool/a": "a", "/v1/pool/": "", "/v1/pool/a/b": "", "/v1/ip": "", "/v1/pool/a_b": ""} {
		got, err := PoolNameFromPath(path)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("PoolNameFromPath(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

// checkDecoded checks what a decoder returned: the error as checkErr does,
// and the value against want.
func checkDecoded[T any](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	checkErr(t, err, wantErr)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestSchedulerConfigYAML(t *testing.T) {
	for _, c := range []SchedulerConfig{
		{Kubeconfig: "/k/scheduler.kubeconfig", URLPrefix: "https://127.0.0.1:9040/", Resource: "tke.cloud.tencent.com/eni-ip", CertDir: "/certs", ServerName: "localhost"},
		{Kubeconfig: "/k", URLPrefix: "https://e:1", Resource: "r", NodeCacheCapable: true, QPS: 200, CertDir: "/etc/kubernetes/edgeplane-floatip"},
	} {
		var got struct {
			Kind             string `json:"kind"`
			ClientConnection struct {
				Kubeconfig string  `json:"kubeconfig"`
				QPS        float64 `json:"qps"`
				Burst      int     `json:"burst"`
			} `json:"clientConnection"`
			Extenders []struct {
				URLPrefix        string `json:"urlPrefix"`
				FilterVerb       string `json:"filterVerb"`
				BindVerb         string `json:"bindVerb"`
				NodeCacheCapable bool   `json:"nodeCacheCapable"`
				EnableHTTPS      bool   `json:"enableHTTPS"`
				TLSConfig        struct {
					CertFile, KeyFile, CAFile, ServerName string
				} `json:"tlsConfig"`
				ManagedResources []struct {
					Name               string `json:"name"`
					IgnoredByScheduler bool   `json:"ignoredByScheduler"`
				} `json:"managedResources"`
			} `json:"extenders"`
		}
		if err := yaml.Unmarshal([]byte(c.YAML()), &got); err != nil {
			t.Fatalf("%+v: %v\n%s", c, err, c.YAML())
		}
		if got.Kind != "KubeSchedulerConfiguration" || got.ClientConnection.Kubeconfig != c.Kubeconfig ||
			got.ClientConnection.QPS != float64(c.QPS) || got.ClientConnection.Burst != 2*c.QPS || len(got.Extenders) != 1 {
			t.Fatalf("%+v rendered %+v", c, got)
		}
		e := got.Extenders[0]
		if !e.EnableHTTPS || e.TLSConfig.CertFile != c.CertDir+"/tls.crt" || e.TLSConfig.KeyFile != c.CertDir+"/tls.key" ||
			e.TLSConfig.CAFile != c.CertDir+"/ca.crt" || e.TLSConfig.ServerName != c.ServerName {
			t.Errorf("%+v: TLS %v %+v", c, e.EnableHTTPS, e.TLSConfig)
		}
		if e.URLPrefix != strings.TrimSuffix(c.URLPrefix, "/")+"/v1" || e.FilterVerb != "filter" || e.BindVerb != "bind" ||
			e.NodeCacheCapable != c.NodeCacheCapable || len(e.ManagedResources) != 1 || e.ManagedResources[0].Name != c.Resource || !e.ManagedResources[0].IgnoredByScheduler {
			t.Fatalf("%+v rendered extender %+v", c, e)
		}
	}
}
