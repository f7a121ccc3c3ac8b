package cniipam

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	const kc = `"kubeconfig":"/etc/cni/net.d/edgeplane-cni-ipam.kubeconfig"`
	conf := func(version, ipam string) string {
		return `{"cniVersion":"` + version + `","name":"float","type":"bridge","ipam":` + ipam + `}`
	}
	cases := map[string]struct {
		in      string
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		"defaults": {in: conf("1.0.0", `{"type":"edgeplane-cni-ipam",`+kc+`}`), check: func(t *testing.T, c Config) {
			if c.WaitTimeout != DefaultWaitTimeout || c.PrimaryInterface != "eth0" || c.RoutesSet || len(c.Pools) != 0 || c.Name != "float" {
				t.Fatalf("config = %+v", c)
			}
		}},
		"everything": {in: conf("1.1.0", `{"type":"x",`+kc+`,"waitTimeout":"5s","primaryInterface":"net0","pools":["a","b.c"],
			"routes":[{"dst":"10.0.0.0/8"},{"dst":"::/0","gw":"fd00::1"}],"dns":{"nameservers":["10.0.0.2"]}}`), check: func(t *testing.T, c Config) {
			if c.WaitTimeout != 5*time.Second || c.PrimaryInterface != "net0" || len(c.Pools) != 2 || !c.RoutesSet || len(c.Routes) != 2 || c.DNS.Nameservers[0] != "10.0.0.2" {
				t.Fatalf("config = %+v", c)
			}
		}},
		"no routes": {in: conf("0.4.0", `{`+kc+`,"routes":[]}`), check: func(t *testing.T, c Config) {
			if !c.RoutesSet || len(c.Routes) != 0 {
				t.Fatalf("routes: set %v %v", c.RoutesSet, c.Routes)
			}
		}},
		"zero wait": {in: conf("1.0.0", `{`+kc+`,"waitTimeout":"0s"}`), check: func(t *testing.T, c Config) {
			if c.WaitTimeout != 0 {
				t.Fatalf("wait = %s", c.WaitTimeout)
			}
		}},
		"prevResult": {in: `{"cniVersion":"1.0.0","name":"n","ipam":{` + kc + `},"prevResult":{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.5/24"}]}}`,
			check: func(t *testing.T, c Config) {
				if c.PrevResult == nil {
					t.Fatal("prevResult not parsed")
				}
			}},
		"not json":        {in: `{"cniVersion":`, wantErr: "not valid JSON"},
		"no name":         {in: `{"cniVersion":"1.0.0","ipam":{` + kc + `}}`, wantErr: "no name"},
		"old version":     {in: conf("0.3.1", `{`+kc+`}`), wantErr: `cniVersion "0.3.1" is not one of 0.4.0, 1.0.0, 1.1.0`},
		"no ipam":         {in: `{"cniVersion":"1.0.0","name":"n"}`, wantErr: "no ipam section"},
		"null ipam":       {in: conf("1.0.0", `null`), wantErr: "no ipam section"},
		"ipam not object": {in: conf("1.0.0", `"x"`), wantErr: "ipam section"},
		"unknown field":   {in: conf("1.0.0", `{`+kc+`,"waitTimout":"1s"}`), wantErr: `unknown field "waitTimout"`},
		"no kubeconfig": {in: conf("1.0.0", `{"type":"x"}`), check: func(t *testing.T, c Config) {
			if c.Name != "float" {
				t.Fatalf("config = %+v", c)
			}
		}},
		"another kubeconfig": {in: conf("1.0.0", `{"kubeconfig":"/var/lib/tenant/kubeconfig"}`),
			wantErr: `ipam.kubeconfig "/var/lib/tenant/kubeconfig" is refused: the plugin reads only its installer's kubeconfig, ` + KubeconfigPath},
		"relative kube":               {in: conf("1.0.0", `{"kubeconfig":"kc"}`), wantErr: `ipam.kubeconfig "kc" is refused`},
		"kubeconfig path in disguise": {in: conf("1.0.0", `{"kubeconfig":"/etc/cni/net.d/../net.d/edgeplane-cni-ipam.kubeconfig"}`), wantErr: "is refused"},
		"bad wait":                    {in: conf("1.0.0", `{`+kc+`,"waitTimeout":"soon"}`), wantErr: "ipam.waitTimeout"},
		"negative wait":               {in: conf("1.0.0", `{`+kc+`,"waitTimeout":"-1s"}`), wantErr: "ipam.waitTimeout"},
		"long wait":                   {in: conf("1.0.0", `{`+kc+`,"waitTimeout":"1h"}`), wantErr: "ipam.waitTimeout"},
		"bad primary":                 {in: conf("1.0.0", `{`+kc+`,"primaryInterface":"a/b"}`), wantErr: "ipam.primaryInterface"},
		"bad pool":                    {in: conf("1.0.0", `{`+kc+`,"pools":["Bad_Pool"]}`), wantErr: "ipam.pools"},
		"route without dst":           {in: conf("1.0.0", `{`+kc+`,"routes":[{"gw":"10.0.0.1"}]}`), wantErr: "ipam.routes[0] has no dst"},
		"null route":                  {in: conf("1.0.0", `{`+kc+`,"routes":[null]}`), wantErr: "ipam.routes[0] has no dst"},
		"bad route":                   {in: conf("1.0.0", `{`+kc+`,"routes":[{"dst":"nope"}]}`), wantErr: "ipam section"},
		"bad prevResult":              {in: `{"cniVersion":"1.0.0","name":"n","ipam":{` + kc + `},"prevResult":{"cniVersion":"1.0.0","ips":[{"address":"x"}]}}`, wantErr: "prevResult"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.in), KubeconfigPath)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestParseArgs(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    PodRef
		wantErr string
	}{
		"kubelet's": {
			in:   "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=0b4e-11",
			want: PodRef{Namespace: "default", Name: "web-0", UID: "0b4e-11"},
		},
		"any order, empty pairs": {in: ";K8S_POD_UID=u;;K8S_POD_NAME=a.b;K8S_POD_NAMESPACE=ns;", want: PodRef{Namespace: "ns", Name: "a.b", UID: "u"}},
		"value with =":           {in: "X=a=b;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_UID=u", want: PodRef{Namespace: "ns", Name: "p", UID: "u"}},
		"empty":                  {in: "", wantErr: "K8S_POD_NAMESPACE"},
		"not a pair":             {in: "K8S_POD_NAMESPACE", wantErr: "is not KEY=VALUE"},
		"no uid":                 {in: "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p", wantErr: "K8S_POD_UID"},
		"blank uid":              {in: "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_UID= ", wantErr: "K8S_POD_UID"},
		"twice":                  {in: "K8S_POD_NAMESPACE=ns;K8S_POD_NAMESPACE=other;K8S_POD_NAME=p;K8S_POD_UID=u", wantErr: "given twice"},
		"bad namespace":          {in: "K8S_POD_NAMESPACE=Not_A_NS;K8S_POD_NAME=p;K8S_POD_UID=u", wantErr: "not a namespace name"},
		"bad name":               {in: "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=../x;K8S_POD_UID=u", wantErr: "not a pod name"},
		"huge":                   {in: strings.Repeat("a=b;", 2000), wantErr: "at most"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseArgs(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"cniVersion":"1.0.0","name":"n","ipam":{"kubeconfig":"/etc/cni/net.d/edgeplane-cni-ipam.kubeconfig","waitTimeout":"1s","pools":["a"],"routes":[{"dst":"0.0.0.0/0"}]}}`))
	f.Add([]byte(`{"cniVersion":"1.1.0","name":"n","ipam":{"kubeconfig":"/k"},"prevResult":{"cniVersion":"1.1.0","ips":[{"address":"10.0.0.1/24","gateway":"10.0.0.254"}]}}`))
	f.Add([]byte(`{"cniVersion":"0.4.0","name":"n","ipam":{"primaryInterface":"eth1","routes":[]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := ParseConfig(in, KubeconfigPath)
		if err != nil {
			return
		}
		// A config that parses names no kubeconfig but the plugin's.
		var named struct {
			IPAM struct {
				Kubeconfig string `json:"kubeconfig"`
			} `json:"ipam"`
		}
		if json.Unmarshal(in, &named) == nil && named.IPAM.Kubeconfig != "" && named.IPAM.Kubeconfig != KubeconfigPath {
			t.Fatalf("accepted a config naming kubeconfig %q", named.IPAM.Kubeconfig)
		}
		// Whatever parses is usable as is.
		if c.Name == "" || c.PrimaryInterface == "" || c.WaitTimeout < 0 || c.WaitTimeout > MaxWaitTimeout {
			t.Fatalf("accepted %+v", c)
		}
		for _, r := range c.Routes {
			if r == nil || r.Dst.IP == nil {
				t.Fatalf("accepted a route without dst: %+v", c.Routes)
			}
		}
		_ = BuildResult(c, c.PrimaryInterface, nil)
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=0b4e")
	f.Add("K8S_POD_NAMESPACE=;K8S_POD_NAME=a;K8S_POD_UID=u")
	f.Add(";=;==")
	f.Fuzz(func(t *testing.T, in string) {
		ref, err := ParseArgs(in)
		if err != nil {
			return
		}
		if ref.Namespace == "" || ref.Name == "" || ref.UID == "" || strings.ContainsAny(ref.Namespace+ref.Name, "/;= ") {
			t.Fatalf("accepted %+v from %q", ref, in)
		}
	})
}
