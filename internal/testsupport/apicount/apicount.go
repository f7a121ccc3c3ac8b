// Package apicount counts a process's Kubernetes API requests by verb and
// resource, for benchmarks that report where their API work goes (a
// rest.Config's WrapTransport).
package apicount

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Counter counts API requests by verb and resource (and their total
// latency), to show where a benchmark's Kubernetes writes go. Watches are
// not counted. Use New.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
	lat    map[string]time.Duration
	// first and last are when each kind of request was first and last
	// answered, since start.
	start       time.Time
	first, last map[string]time.Duration
}

// New returns a Counter whose clock starts now.
func New() *Counter {
	return &Counter{counts: map[string]int{}, lat: map[string]time.Duration{}, start: time.Now(),
		first: map[string]time.Duration{}, last: map[string]time.Duration{}}
}

// Wrap is a rest.Config WrapTransport: cfg.Wrap(counter.Wrap).
func (c *Counter) Wrap(next http.RoundTripper) http.RoundTripper {
	return countingTransport{c: c, next: next}
}

type countingTransport struct {
	c    *Counter
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c := t.c
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	key := apiKey(r)
	if resp != nil && resp.StatusCode >= 400 {
		key += fmt.Sprintf(" (%d)", resp.StatusCode)
	}
	if r.URL.Query().Get("watch") == "true" {
		return resp, err
	}
	c.mu.Lock()
	c.counts[key]++
	c.lat[key] += time.Since(start)
	at := time.Since(c.start)
	if _, ok := c.first[key]; !ok {
		c.first[key] = at
	}
	c.last[key] = at
	c.mu.Unlock()
	return resp, err
}

// apiKey is "VERB resource[/subresource]" of a request path like
// /apis/g/v/resource/name/sub or /api/v1/namespaces/ns/resource/name.
func apiKey(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	default:
		return r.Method + " " + r.URL.Path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	res := ""
	if len(parts) > 0 {
		res = parts[0]
	}
	if len(parts) > 2 {
		res += "/" + parts[2]
	}
	verb := r.Method
	if verb == http.MethodGet && len(parts) == 1 {
		verb = "LIST"
	}
	return verb + " " + res
}

// Reset restarts the clock of first and last.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start = time.Now()
	clear(c.first)
	clear(c.last)
}

// WriteCounts are the successful writes by "VERB resource".
func (c *Counter) WriteCounts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.counts {
		if !strings.HasPrefix(k, "GET ") && !strings.HasPrefix(k, "LIST ") && !strings.Contains(k, "(") {
			out[k] = v
		}
	}
	return out
}

// Writes is the number of requests that are neither GET nor LIST.
func (c *Counter) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.counts {
		if !strings.HasPrefix(k, "GET ") && !strings.HasPrefix(k, "LIST ") {
			n += v
		}
	}
	return n
}

// String lists every kind of request with its count, average latency and
// when it was first and last answered.
func (c *Counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.counts))
	for k := range c.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-45s %6d  avg %-8v  from %5.2fs to %5.2fs\n", k, c.counts[k], (c.lat[k] / time.Duration(c.counts[k])).Round(100*time.Microsecond),
			c.first[k].Seconds(), c.last[k].Seconds())
	}
	return b.String()
}

// Counts are every kind of request answered so far, by "VERB resource"
// (with " (code)" for a status of 400 or more), for a caller that diffs two
// snapshots around a phase.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Reads is the number of GET and LIST requests.
func (c *Counter) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.counts {
		if strings.HasPrefix(k, "GET ") || strings.HasPrefix(k, "LIST ") {
			n += v
		}
	}
	return n
}
