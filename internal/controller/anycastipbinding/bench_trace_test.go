package anycastipbinding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
)

// traceBench (AIA_BENCH_TRACE=1) records, per node, when each request of
// its way from label to Ready was sent and answered — the manager's
// Kubernetes requests by the object they name, its cloud calls by the node
// their body names — and prints where the time of the slowest bindings
// went. Diagnostic only: the recording costs a little CPU on the measured
// path, so traced runs are not compared with untraced ones.
var traceBench = os.Getenv("AIA_BENCH_TRACE") != ""

// benchTrace is the per-node record of one benchmark run.
type benchTrace struct {
	start  time.Time
	prefix string
	mu     sync.Mutex
	// at[node][phase] is when phase first happened, since start (the
	// status write: the last, the one that wrote Ready).
	at map[string]map[string]time.Duration
	// nodeOf maps an address ID to the node it was allocated for.
	nodeOf map[string]string
}

func newBenchTrace(prefix string) *benchTrace {
	return &benchTrace{start: time.Now(), prefix: prefix, at: map[string]map[string]time.Duration{}, nodeOf: map[string]string{}}
}

// note records phase of node at t (the first time only; every time for
// the status write, whose last is the one that wrote Ready).
func (t *benchTrace) note(node, phase string, at time.Time) {
	if t == nil || !strings.HasPrefix(node, t.prefix) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.at[node]
	if m == nil {
		m = map[string]time.Duration{}
		t.at[node] = m
	}
	if _, ok := m[phase]; !ok || strings.HasPrefix(phase, "status") {
		m[phase] = at.Sub(t.start)
	}
}

// bodyOf returns a copy of the request's body without consuming it.
func bodyOf(r *http.Request) []byte {
	if r.GetBody == nil {
		return nil
	}
	rc, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer func() { _ = rc.Close() }()
	data, _ := io.ReadAll(rc)
	return data
}

// kube wraps the manager's Kubernetes transport.
func (t *benchTrace) kube(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("watch") == "true" {
			return next.RoundTrip(r)
		}
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		var node, phase string
		switch {
		case len(parts) >= 5 && parts[3] == "anycastipbindings":
			node = parts[4]
			switch {
			case r.Method == http.MethodGet:
				phase = "guard"
			case r.Method == http.MethodPatch:
				phase = "annotations"
			case r.Method == http.MethodPut && len(parts) == 6:
				phase = "status"
			}
		case len(parts) == 4 && parts[3] == "anycastipbindings" && r.Method == http.MethodPost:
			var o struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			_ = json.Unmarshal(bodyOf(r), &o)
			node, phase = o.Metadata.Name, "create"
		case len(parts) == 4 && parts[3] == "clusterproviderconfigusages" && r.Method == http.MethodPost:
			var o struct {
				ResourceRef struct{ Name string } `json:"resourceRef"`
			}
			_ = json.Unmarshal(bodyOf(r), &o)
			node, phase = o.ResourceRef.Name, "usage"
		case len(parts) == 4 && parts[2] == "nodes" && r.Method == http.MethodPatch:
			node, phase = parts[3], "node"
		}
		if phase == "" {
			return next.RoundTrip(r)
		}
		t.note(node, phase+">", time.Now())
		resp, err := next.RoundTrip(r)
		if err == nil && resp.StatusCode < 300 {
			t.note(node, phase+"<", time.Now())
		}
		return resp, err
	})
}

// cloud wraps the Tencent client's transport (after its buckets).
func (t *benchTrace) cloud(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		action := r.Header.Get("X-TC-Action")
		if action != "AllocateAddresses" && action != "AssociateAddress" {
			return next.RoundTrip(r)
		}
		var in struct {
			Tags []struct {
				Key, Value string
			}
			AddressId, InstanceId string //nolint:revive // Tencent's names
		}
		_ = json.Unmarshal(bodyOf(r), &in)
		var node, phase string
		if action == "AllocateAddresses" {
			phase = "allocate"
			for _, tg := range in.Tags {
				if tg.Key == decide.TagNodeName {
					node = tg.Value
				}
			}
		} else {
			phase = "associate"
			if i, err := strconv.Atoi(strings.TrimPrefix(in.InstanceId, "ins-b")); err == nil {
				node = fmt.Sprintf("%s%03d", t.prefix, i)
			}
		}
		t.note(node, phase+">", time.Now())
		resp, err := next.RoundTrip(r)
		if err != nil || resp.StatusCode >= 300 {
			return resp, err
		}
		t.note(node, phase+"<", time.Now())
		if action == "AllocateAddresses" {
			data, rerr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(data))
			var out struct{ Response struct{ AddressSet []string } }
			if rerr == nil && json.Unmarshal(data, &out) == nil && len(out.Response.AddressSet) == 1 {
				t.mu.Lock()
				t.nodeOf[out.Response.AddressSet[0]] = node
				t.mu.Unlock()
			}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// tracePhases is the order of a node's way from label to Ready.
var tracePhases = []string{"label<", "create>", "create<", "seen", "guard>", "usage>", "guard<", "usage<", "allocate>", "allocate<",
	"annotations>", "annotations<", "associate>", "associate<", "node>", "node<", "status>", "status<", "ready"}

// print writes the per-phase gaps over all nodes and the whole timeline
// of the last nodes to turn Ready.
func (t *benchTrace) print(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ms := func(d time.Duration) string { return fmt.Sprintf("%4.0f", float64(d)/float64(time.Millisecond)) }
	_, _ = fmt.Fprintf(w, "trace: gaps between consecutive phases over %d nodes, ms: median p90 max\n", len(t.at))
	for i := 1; i < len(tracePhases); i++ {
		var gaps []time.Duration
		for _, m := range t.at {
			// From the latest earlier phase this node has.
			b, okb := m[tracePhases[i]]
			if !okb {
				continue
			}
			for j := i - 1; j >= 0; j-- {
				if a, ok := m[tracePhases[j]]; ok {
					gaps = append(gaps, b-a)
					break
				}
			}
		}
		if len(gaps) == 0 {
			continue
		}
		slices.Sort(gaps)
		_, _ = fmt.Fprintf(w, "  %-13s %s %s %s  (n=%d)\n", "→"+tracePhases[i], ms(gaps[len(gaps)/2]), ms(gaps[len(gaps)*9/10]), ms(gaps[len(gaps)-1]), len(gaps))
	}
	for _, ph := range []string{"label<", "create<", "seen", "allocate>", "associate>", "node<", "status<", "ready"} {
		var ts []time.Duration
		for _, m := range t.at {
			if v, ok := m[ph]; ok {
				ts = append(ts, v)
			}
		}
		if len(ts) == 0 {
			continue
		}
		slices.Sort(ts)
		q := func(f float64) string { return ms(ts[min(len(ts)-1, int(f*float64(len(ts))))]) }
		_, _ = fmt.Fprintf(w, "  %-11s at (ms) first %s  25%% %s  50%% %s  75%% %s  90%% %s  last %s\n", ph, ms(ts[0]), q(.25), q(.5), q(.75), q(.9), ms(ts[len(ts)-1]))
	}
	names := make([]string, 0, len(t.at))
	for n, m := range t.at {
		if _, ok := m["ready"]; ok {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return int(t.at[b]["ready"] - t.at[a]["ready"]) })
	for _, n := range names[:min(3, len(names))] {
		_, _ = fmt.Fprintf(w, "  last Ready %s:", strings.TrimPrefix(n, t.prefix))
		for _, ph := range tracePhases {
			if v, ok := t.at[n][ph]; ok {
				_, _ = fmt.Fprintf(w, " %s %s", ph, strings.TrimSpace(ms(v)))
			}
		}
		_, _ = fmt.Fprintln(w)
	}
}
