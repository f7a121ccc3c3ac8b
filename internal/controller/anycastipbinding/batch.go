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
	"github.com/edgeplane/edgeplane/internal/runtime/batch"
)

// maxBatch is the most values one DescribeAddresses call takes (AddressIds,
// or the Values of one filter).
const maxBatch = 100

// batchingCloud coalesces the DescribeAddresses look-ups that concurrent
// reconciles make into one call per window (runtime/batch): look-ups by
// address ID, by the owner-UID tag, by instance and by the legacy
// node-name tag each become one call with up to 100 values, whose answer
// is split between the callers. DescribeAddresses is the most frequent
// call (20/s on Tencent), so without this a burst of new nodes is bounded
// by describes rather than by the writes. Everything else passes through.
type batchingCloud struct {
	Cloud
	window  time.Duration
	batches *batch.Batcher[string, string, []tencentcloud.Address]
	// shapes maps a batch key to its query without the batched values
	// (one entry per query shape: a handful).
	shapes sync.Map
}

// shapeOf is what a batch key stands for.
type shapeOf struct {
	dim  string // "id", "instance" or "tag:<key>"
	base tencentcloud.AddressQuery
}

func newBatchingCloud(c Cloud, window time.Duration) *batchingCloud {
	bc := &batchingCloud{Cloud: c, window: window}
	bc.batches = batch.New(batch.Config[string, string, []tencentcloud.Address]{Window: window, Max: maxBatch, Run: bc.run})
	return bc
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
	c.shapes.LoadOrStore(key, shapeOf{dim: dim, base: base})
	all, err := c.batches.Do(ctx, key, value)
	if err != nil {
		return nil, err
	}
	var out []tencentcloud.Address
	for _, a := range all {
		if matches(dim, value, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// run makes the one DescribeAddresses of a batch.
func (c *batchingCloud) run(ctx context.Context, key string, values []string) ([]tencentcloud.Address, error) {
	v, _ := c.shapes.Load(key)
	sh := v.(shapeOf)
	q := sh.base
	switch {
	case sh.dim == "id":
		q.IDs = values
	case sh.dim == "instance":
		q.InstanceIDs = values
	default:
		q.TagValues = map[string][]string{strings.TrimPrefix(sh.dim, "tag:"): values}
	}
	return c.Cloud.DescribeAddresses(ctx, q)
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
