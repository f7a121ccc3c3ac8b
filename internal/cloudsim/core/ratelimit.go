package core

import (
	"math"

	"golang.org/x/time/rate"
)

// Bucket is a token bucket: Burst tokens of capacity, refilled at
// RefillPerSecond. One request costs one token.
type Bucket struct {
	Burst           int     `json:"burst"`
	RefillPerSecond float64 `json:"refillPerSecond"`
}

// Bucket keys are "<provider>/<Action>"; a few actions have a second bucket
// for a particular call shape (see BucketEC2DescribeNetworkInterfacesUnfiltered).
const (
	// BucketEC2DescribeNetworkInterfacesUnfiltered is the smaller bucket EC2
	// applies to DescribeNetworkInterfaces called with neither a filter nor
	// pagination.
	BucketEC2DescribeNetworkInterfacesUnfiltered = ProviderEC2 + "/DescribeNetworkInterfaces#unfiltered"
)

// DefaultBuckets are the real default buckets: EC2's request token buckets per
// action (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html)
// and Tencent Cloud VPC's per-action limits (each action's API page, e.g.
// https://www.tencentcloud.com/document/api/215/16699); docs/architecture.md
// lists them.
// EC2 evaluates each API individually, so every action has its own bucket
// with its category's size; Tencent publishes a per-action requests/second
// limit, modelled as a bucket holding one second's worth.
func DefaultBuckets() map[string]Bucket {
	mutating := Bucket{Burst: 50, RefillPerSecond: 5}
	nonMutating := Bucket{Burst: 100, RefillPerSecond: 20}
	tags := Bucket{Burst: 100, RefillPerSecond: 10}
	perSecond := func(n int) Bucket { return Bucket{Burst: n, RefillPerSecond: float64(n)} }
	return map[string]Bucket{
		ProviderEC2 + "/AllocateAddress":               mutating,
		ProviderEC2 + "/AssociateAddress":              mutating,
		ProviderEC2 + "/DisassociateAddress":           mutating,
		ProviderEC2 + "/ReleaseAddress":                mutating,
		ProviderEC2 + "/DescribeAddresses":             nonMutating,
		ProviderEC2 + "/DescribeNetworkInterfaces":     nonMutating,
		BucketEC2DescribeNetworkInterfacesUnfiltered:   {Burst: 50, RefillPerSecond: 10},
		ProviderEC2 + "/CreateTags":                    tags,
		ProviderEC2 + "/DeleteTags":                    tags,
		ProviderTencent + "/AllocateAddresses":         perSecond(10),
		ProviderTencent + "/AssociateAddress":          perSecond(10),
		ProviderTencent + "/DisassociateAddress":       perSecond(10),
		ProviderTencent + "/ReleaseAddresses":          perSecond(10),
		ProviderTencent + "/DescribeAddresses":         perSecond(20),
		ProviderTencent + "/DescribeTaskResult":        perSecond(20),
		ProviderTencent + "/DescribeNetworkInterfaces": perSecond(100),
		ProviderTencent + "/DescribeInstances":         perSecond(40),
		ProviderTencent + "/DescribeResourcesByTags":   perSecond(100),
		// Tag write actions: 20/s (https://www.tencentcloud.com/document/api/651/33003).
		ProviderTencent + "/ModifyResourceTags": perSecond(20),
	}
}

// rateLimits holds one limiter per bucket key, created lazily from the
// settings. It is guarded by the World mutex.
type rateLimits struct {
	limiters map[string]*rate.Limiter
}

func newRateLimits() *rateLimits {
	return &rateLimits{limiters: map[string]*rate.Limiter{}}
}

// effectiveBucket applies overrides and the scale factor. ok is false when the
// key has no bucket (unknown actions are not limited).
func effectiveBucket(s *Settings, key string) (Bucket, bool) {
	b, ok := s.RateLimitOverrides[key]
	if !ok {
		b, ok = DefaultBuckets()[key]
	}
	if !ok {
		return Bucket{}, false
	}
	scale := s.RateLimitScale
	if scale <= 0 {
		scale = 1
	}
	return Bucket{
		Burst:           max(1, int(math.Ceil(float64(b.Burst)*scale))),
		RefillPerSecond: b.RefillPerSecond * scale,
	}, true
}

// allow takes one token from the bucket for key at the world's current time.
func (w *World) allow(key string) bool {
	if w.settings.RateLimitsDisabled {
		return true
	}
	l, ok := w.limits.limiters[key]
	if !ok {
		b, found := effectiveBucket(&w.settings, key)
		if !found {
			return true
		}
		l = rate.NewLimiter(rate.Limit(b.RefillPerSecond), b.Burst)
		// A new bucket starts full, as AWS documents for its buckets.
		w.limits.limiters[key] = l
	}
	return l.AllowN(w.clock.Now(), 1)
}
