package wire

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

// The fuzz targets check that no request body or query panics a decoder and
// that whatever a decoder accepts satisfies the guarantees the servers rely on.

func FuzzDecodeFilterArgs(f *testing.F) {
	f.Add([]byte(`{"Pod":{"metadata":{"name":"p","namespace":"ns"}},"NodeNames":["n1"]}`))
	f.Add([]byte(`{"Pod":{"metadata":{"name":"p","namespace":"ns","annotations":{"tke.cloud.tencent.com/eni-ip-pool":"a"}}},"Nodes":{"items":[{"metadata":{"name":"n"}}]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		args, err := DecodeFilterArgs(bytes.NewReader(body))
		if err == nil && (args.Pod == nil || args.Pod.Name == "" || args.Pod.Namespace == "") {
			t.Fatalf("accepted a filter request without a named pod: %q", body)
		}
	})
}

func FuzzDecodeBindingArgs(f *testing.F) {
	f.Add([]byte(`{"PodName":"p","PodNamespace":"ns","PodUID":"u","Node":"n1"}`))
	f.Add([]byte(`{"PodName":"p"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		args, err := DecodeBindingArgs(bytes.NewReader(body))
		if err == nil && (args.PodName == "" || args.PodNamespace == "" || args.Node == "") {
			t.Fatalf("accepted an incomplete bind request: %q", body)
		}
	})
}

func FuzzParseListQuery(f *testing.F) {
	f.Add("keyword=web&page=2&size=5&sort=ip+desc")
	f.Add("appType=deployment&namespace=ns&appName=web&poolName=p")
	f.Add("page=-1&size=99999999999999999999")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		lq := ParseListQuery(q)
		if lq.Page < 0 || lq.Page > MaxPage || lq.Size < 1 || lq.Size > MaxSize {
			t.Fatalf("page %d, size %d out of range for %q", lq.Page, lq.Size, raw)
		}
		if lq.Fuzzy != (q.Get("keyword") != "") {
			t.Fatalf("fuzzy %v for %q", lq.Fuzzy, raw)
		}
	})
}

func FuzzDecodeReleaseRequest(f *testing.F) {
	f.Add([]byte(`{"ips":[{"ip":"10.0.0.1","namespace":"ns","appName":"web","podName":"web-0"}]}`))
	f.Add([]byte(`{"ips":[{"ip":"::ffff:10.0.0.1","appType":"deployment"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, err := DecodeReleaseRequest(bytes.NewReader(body))
		if err != nil {
			return
		}
		for _, it := range items {
			if !it.IP.IsValid() || it.IP.Is4In6() {
				t.Fatalf("accepted ip %v from %q", it.IP, body)
			}
		}
	})
}

func FuzzDecodePoolRequest(f *testing.F) {
	f.Add([]byte(`{"name":"pool-a","size":3,"preAllocateIP":true}`))
	f.Add([]byte(`{"name":"pool_a","size":-3}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := DecodePoolRequest(bytes.NewReader(body))
		if err != nil {
			return
		}
		if p.Size < 0 || p.Size > MaxPoolSize || p.Name == "" || strings.Contains(p.Name, "_") {
			t.Fatalf("accepted pool %+v from %q", p, body)
		}
	})
}
