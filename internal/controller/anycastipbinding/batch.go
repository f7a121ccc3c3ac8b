package anycastipbinding

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
)

// maxBatch is the most values one DescribeAddresses call takes (AddressIds,
// or the Values of one filter).
const maxBatch = 100

// batchingCloud coalesces the DescribeAddresses look-ups that concurrent
// reconciles make into one call per window: look-ups by address ID, by the
// owner-UID tag, by instance and by the legacy node-name tag each become one
// call with up to 100 values, whose answer is split between the callers.
// DescribeAddresses is the most frequent call (20/s on Tencent), so without
// this a burst of new nodes is bounded by describes rather than by the
// writes. Everything else passes through.
type batchingCloud struct {
	Cloud
	window time.Duration

	mu      sync.Mutex
	pending map[string]*addressBatch
}

func newBatchingCloud(c Cloud, window time.Duration) *batchingCloud {
	return &batchingCloud{Cloud: c, window: window, pending: map[string]*addressBatch{}}
}

// addressBatch is one coalesced look-up.
type addressBatch struct {
	base   tencentcloud.AddressQuery
	dim    string // "id", "instance" or "tag:<key>"
	values []string
	seen   map[string]bool
	done   chan struct{}
	result []tencentcloud.Address
	err    error
}

// shape says along which dimension q can be batched, its value, and the
// rest of the query (the batch key).
func shape(q tencentcloud.AddressQuery) (dim, value string, base tencentcloud.AddressQuery, ok bool) {
	switch {
	case len(q.IDs) == 1 && q.InstanceID == "" && len(q.Tags) == 0 && len(q.TagKeys) == 0 && len(q.Types) == 0 && len(q.Statuses) == 0:
		return "id", q.IDs[0], tencentcloud.AddressQuery{}, true
	case len(q.IDs) == 0 && q.InstanceID != "" && len(q.Tags) == 0 && len(q.TagKeys) == 0:
		base = q
		base.InstanceID = ""
		return "instance", q.InstanceID, base, true
	case len(q.IDs) == 0 && q.InstanceID == "" && len(q.TagKeys) == 0 && len(q.Tags) > 0:
		for _, k := range []string{decide.TagOwnerUID, networkingv1alpha1.LegacyTagNodeName} {
			if v, has := q.Tags[k]; has {
				base = q
				base.Tags = maps.Clone(q.Tags)
				delete(base.Tags, k)
				return "tag:" + k, v, base, true
			}
		}
	}
	return "", "", tencentcloud.AddressQuery{}, false
}

func batchKey(dim string, base tencentcloud.AddressQuery) string {
	var b strings.Builder
	b.WriteString(dim)
	b.WriteString("|")
	b.WriteString(strings.Join(base.Types, ","))
	b.WriteString("|")
	b.WriteString(strings.Join(base.Statuses, ","))
	for _, k := range slices.Sorted(maps.Keys(base.Tags)) {
		fmt.Fprintf(&b, "|%s=%s", k, base.Tags[k])
	}
	return b.String()
}

// DescribeAddresses batches q when it has a batchable shape.
func (c *batchingCloud) DescribeAddresses(ctx context.Context, q tencentcloud.AddressQuery) ([]tencentcloud.Address, error) {
	dim, value, base, ok := shape(q)
	if !ok || c.window <= 0 {
		return c.Cloud.DescribeAddresses(ctx, q)
	}
	key := batchKey(dim, base)
	c.mu.Lock()
	bt := c.pending[key]
	if bt == nil {
		bt = &addressBatch{base: base, dim: dim, seen: map[string]bool{}, done: make(chan struct{})}
		c.pending[key] = bt
		time.AfterFunc(c.window, func() { c.flush(key, bt) })
	}
	if !bt.seen[value] {
		bt.seen[value] = true
		bt.values = append(bt.values, value)
	}
	full := len(bt.values) >= maxBatch
	if full {
		delete(c.pending, key)
	}
	c.mu.Unlock()
	if full {
		go c.run(bt)
	}
	select {
	case <-bt.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a batched DescribeAddresses: %w", ctx.Err())
	}
	if bt.err != nil {
		return nil, bt.err
	}
	var out []tencentcloud.Address
	for _, a := range bt.result {
		if matches(dim, value, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// flush runs the batch when its window ends, unless it already ran full.
func (c *batchingCloud) flush(key string, bt *addressBatch) {
	c.mu.Lock()
	if c.pending[key] != bt {
		c.mu.Unlock()
		return
	}
	delete(c.pending, key)
	c.mu.Unlock()
	c.run(bt)
}

func (c *batchingCloud) run(bt *addressBatch) {
	defer close(bt.done)
	q := bt.base
	switch {
	case bt.dim == "id":
		q.IDs = bt.values
	case bt.dim == "instance":
		q.InstanceIDs = bt.values
	default:
		q.TagValues = map[string][]string{strings.TrimPrefix(bt.dim, "tag:"): bt.values}
	}
	// The batch serves many reconciles: give it its own deadline rather
	// than the first caller's context.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bt.result, bt.err = c.Cloud.DescribeAddresses(ctx, q)
}

func matches(dim, value string, a tencentcloud.Address) bool {
	switch dim {
	case "id":
		return a.ID == value
	case "instance":
		return a.InstanceID == value
	default:
		return a.Tags[strings.TrimPrefix(dim, "tag:")] == value
	}
}
