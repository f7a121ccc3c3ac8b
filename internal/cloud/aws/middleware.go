package aws

import (
	"context"
	"fmt"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// Bucket categories (see RateLimits).
const (
	bucketMutating              = "mutating"
	bucketNonMutating           = "non-mutating"
	bucketUnfilteredNonMutating = "unfiltered-non-mutating"
	bucketTags                  = "tags"
)

// bucketCategory maps an operation and its input to its EC2 throttling
// category.
func bucketCategory(op string, params any) string {
	switch op {
	case "AllocateAddress", "AssociateAddress", "DisassociateAddress", "ReleaseAddress":
		return bucketMutating
	case "CreateTags", "DeleteTags":
		return bucketTags
	case "DescribeNetworkInterfaces":
		if in, ok := params.(*ec2.DescribeNetworkInterfacesInput); ok && in != nil &&
			len(in.Filters) == 0 && in.MaxResults == nil && in.NextToken == nil {
			return bucketUnfilteredNonMutating
		}
		return bucketNonMutating
	default:
		return bucketNonMutating
	}
}

// throttler holds one token bucket per action (and per call shape for
// DescribeNetworkInterfaces), created on first use.
type throttler struct {
	limits   RateLimits
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func newThrottler(l RateLimits) *throttler {
	return &throttler{limits: l, limiters: map[string]*rate.Limiter{}}
}

func (t *throttler) limiter(op, category string) *rate.Limiter {
	key := op + "/" + category
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.limiters[key]; ok {
		return l
	}
	var rl cloud.RateLimit
	switch category {
	case bucketMutating:
		rl = t.limits.Mutating
	case bucketTags:
		rl = t.limits.Tags
	case bucketUnfilteredNonMutating:
		rl = t.limits.UnfilteredNonMutating
	default:
		rl = t.limits.NonMutating
	}
	if o, ok := t.limits.PerAction[op]; ok {
		rl = o
	}
	l := rl.ClientSide().NewLimiter()
	t.limiters[key] = l
	return l
}

type bucketKey struct{}

// addMiddleware classifies the call at Initialize (where the input is
// visible) and takes a token in Finalize right after the Retry middleware,
// so every attempt — retries included — waits for its bucket, exactly as
// every attempt costs a token on EC2's side.
func (t *throttler) addMiddleware(stack *middleware.Stack) error {
	if t.limits.Disabled {
		return nil
	}
	classify := middleware.InitializeMiddlewareFunc("edgeplane/ClassifyRateLimitBucket",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			ctx = middleware.WithStackValue(ctx, bucketKey{}, bucketCategory(awsmiddleware.GetOperationName(ctx), in.Parameters))
			return next.HandleInitialize(ctx, in)
		})
	if err := stack.Initialize.Add(classify, middleware.Before); err != nil {
		return fmt.Errorf("adding rate-limit classifier: %w", err)
	}
	wait := middleware.FinalizeMiddlewareFunc("edgeplane/ClientRateLimit",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			op := awsmiddleware.GetOperationName(ctx)
			category, _ := middleware.GetStackValue(ctx, bucketKey{}).(string)
			start := time.Now()
			if err := t.limiter(op, category).Wait(ctx); err != nil {
				return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("waiting for the client-side %s rate limit of %s: %w", category, op, err)
			}
			cloud.ObserveRateLimitWait(cloud.ProviderAWS, op, time.Since(start))
			return next.HandleFinalize(ctx, in)
		})
	if err := stack.Finalize.Insert(wait, "Retry", middleware.After); err != nil {
		return fmt.Errorf("adding client-side rate limit: %w", err)
	}
	return nil
}

// addMetricsMiddleware records every call (after all retries) by operation
// and result code, and logs failures at debug level. It never logs request
// parameters, so nothing sensitive reaches the log.
func addMetricsMiddleware(stack *middleware.Stack) error {
	m := middleware.InitializeMiddlewareFunc("edgeplane/CallMetrics",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			op := awsmiddleware.GetOperationName(ctx)
			code := resultCode(err)
			cloud.ObserveCall(cloud.ProviderAWS, op, code, time.Since(start))
			if err != nil {
				log.FromContext(ctx).V(1).Info("EC2 call failed", "action", op, "code", code, "duration", time.Since(start))
			}
			return out, md, err
		})
	return stack.Initialize.Add(m, middleware.Before)
}

// gateMiddleware keeps calls away from EC2 while the account's credentials
// are rejected (cloud.CredentialGate): one client serves one account.
func gateMiddleware(g *cloud.CredentialGate) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		m := middleware.InitializeMiddlewareFunc("edgeplane/CredentialGate",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				probe, err := g.Admit()
				if err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
				out, md, err := next.HandleInitialize(ctx, in)
				var rejected error
				if IsCredentialsRejected(err) {
					rejected = err
				}
				g.Done(probe, rejected)
				return out, md, err
			})
		return stack.Initialize.Add(m, middleware.Before)
	}
}
