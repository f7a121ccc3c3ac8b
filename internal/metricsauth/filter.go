// Package metricsauth guards the manager's endpoints that clients reach with
// a bearer token: a caller must present a token the API server accepts (a
// TokenReview) for a user allowed the request (a SubjectAccessReview), as
// kube-rbac-proxy and controller-runtime's metrics/filters do. The metrics
// endpoint asks about its non-resource URL (Handler); the galaxy-ipam
// compatible API asks about the objects each request reads or writes
// (Authenticated, then Allowed with resource attributes).
//
// It exists instead of controller-runtime's
// filters.WithAuthenticationAndAuthorization, which does the same through
// k8s.io/apiserver's delegating authenticator and authorizer: that brings
// about 200 packages (the apiserver's authentication and authorization
// stacks, cel-go, cobra) into the binary, and their code and data cost every
// manager replica about 7.5 MiB of resident memory (docs/operations.md) for
// two API calls and a cache.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The cache lifetimes are controller-runtime's (and the API server's
// delegating defaults): an accepted token for a minute, a refused one for
// 10 s; an allowed request for five minutes, a denied one for 30 s.
const (
	tokenTTL        = time.Minute
	tokenFailureTTL = 10 * time.Second
	allowTTL        = 5 * time.Minute
	denyTTL         = 30 * time.Second
	reviewTimeout   = 10 * time.Second
	// maxCached bounds each cache (scrapers are few; the least recently
	// used answer goes first).
	maxCached = 1024
)

// Reviewer asks the API server about tokens and access.
type Reviewer interface {
	ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error)
	ReviewAccess(ctx context.Context, spec authzv1.SubjectAccessReviewSpec) (authzv1.SubjectAccessReviewStatus, error)
}

// Filter is a metricsserver.FilterProvider: every request needs a token
// for a user allowed to GET the path.
func Filter(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	g, err := NewGuardFor(config, httpClient)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return g.Handler(log, next), nil
	}, nil
}

// NewGuardFor returns a Guard asking the API server config points at.
func NewGuardFor(config *rest.Config, httpClient *http.Client) (*Guard, error) {
	authn, err := authenticationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the TokenReview client: %w", err)
	}
	authz, err := authorizationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the SubjectAccessReview client: %w", err)
	}
	return NewGuard(apiReviewer{authn: authn, authz: authz}, clock.RealClock{}), nil
}

// Guard authenticates and authorizes requests through a Reviewer, caching
// the answers.
type Guard struct {
	reviewer Reviewer
	// tokens holds TokenReviewStatus answers by token digest, access the
	// allowed verdicts by accessKey.
	tokens, access *cache.LRUExpireCache
}

// NewGuard returns a Guard asking r, its caches on clk.
func NewGuard(r Reviewer, clk clock.PassiveClock) *Guard {
	return &Guard{reviewer: r, tokens: newCache(clk), access: newCache(clk)}
}

// newCache is a cache of at most maxCached answers on clk.
func newCache(clk clock.PassiveClock) *cache.LRUExpireCache {
	return cache.NewLRUExpireCacheWithClock(maxCached, clk)
}

// Handler wraps next: 401 without an accepted token, 403 for a user not
// allowed the request's method on its path (a non-resource URL), 500 when
// the API server cannot answer.
func (g *Guard) Handler(log logr.Logger, next http.Handler) http.Handler {
	return g.Authenticated(log, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, _ := UserFrom(req.Context())
		allowed, err := g.authorize(req.Context(), AccessSpec(user, strings.ToLower(req.Method), req.URL.Path))
		if err != nil {
			msg := fmt.Sprintf("Authorization for user %s failed", user.Username)
			log.Error(err, msg)
			http.Error(w, msg, http.StatusInternalServerError)
			return
		}
		if !allowed {
			msg := fmt.Sprintf("Authorization denied for user %s", user.Username)
			log.V(4).Info(msg, "path", req.URL.Path)
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, req)
	}))
}

// userKey is the context key of the authenticated user.
type userKey struct{}

// UserFrom returns the user Authenticated put in ctx.
func UserFrom(ctx context.Context) (authnv1.UserInfo, bool) {
	u, ok := ctx.Value(userKey{}).(authnv1.UserInfo)
	return u, ok
}

// Authenticated wraps next: 401 without a bearer token the API server
// accepts, 500 when it cannot answer; next finds the user with UserFrom and
// decides what the user may do (Allowed).
func (g *Guard) Authenticated(log logr.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := BearerToken(req.Header.Get("Authorization"))
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		user, err := g.authenticate(req.Context(), token)
		if err != nil {
			log.Error(err, "Authentication failed")
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
			return
		}
		if !user.Authenticated {
			log.V(4).Info("Authentication failed", "error", user.Error)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), userKey{}, user.User)))
	})
}

// Allowed reports whether u may do what attrs say (a SubjectAccessReview
// with resource attributes, cached like every answer).
func (g *Guard) Allowed(ctx context.Context, u authnv1.UserInfo, attrs authzv1.ResourceAttributes) (bool, error) {
	return g.authorize(ctx, ResourceAccessSpec(u, attrs))
}

func (g *Guard) authenticate(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	return cached(ctx, g.tokens, digest(token), func(ctx context.Context) (authnv1.TokenReviewStatus, error) {
		return g.reviewer.ReviewToken(ctx, token)
	}, func(st authnv1.TokenReviewStatus) bool { return st.Authenticated }, tokenTTL, tokenFailureTTL)
}

func (g *Guard) authorize(ctx context.Context, spec authzv1.SubjectAccessReviewSpec) (bool, error) {
	return cached(ctx, g.access, accessKey(spec), func(ctx context.Context) (bool, error) {
		st, err := g.reviewer.ReviewAccess(ctx, spec)
		return st.Allowed && !st.Denied, err
	}, func(allowed bool) bool { return allowed }, allowTTL, denyTTL)
}

// cached returns c's answer for key, or asks review (bounded by
// reviewTimeout) and keeps its answer for okTTL when positive reports it
// positive, failTTL otherwise.
func cached[V any](ctx context.Context, c *cache.LRUExpireCache, key string, review func(context.Context) (V, error), positive func(V) bool, okTTL, failTTL time.Duration) (V, error) {
	if v, ok := c.Get(key); ok {
		return v.(V), nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	v, err := review(ctx)
	if err != nil {
		var zero V
		return zero, err
	}
	ttl := failTTL
	if positive(v) {
		ttl = okTTL
	}
	c.Add(key, v, ttl)
	return v, nil
}

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header value (the scheme is case-insensitive, as in the API server).
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// AccessSpec is the SubjectAccessReview of a user's request for a
// non-resource path.
func AccessSpec(u authnv1.UserInfo, verb, path string) authzv1.SubjectAccessReviewSpec {
	spec := userSpec(u)
	spec.NonResourceAttributes = &authzv1.NonResourceAttributes{Path: path, Verb: verb}
	return spec
}

// ResourceAccessSpec is the SubjectAccessReview of a user's request to do
// what attrs say to an object or a collection.
func ResourceAccessSpec(u authnv1.UserInfo, attrs authzv1.ResourceAttributes) authzv1.SubjectAccessReviewSpec {
	spec := userSpec(u)
	spec.ResourceAttributes = &attrs
	return spec
}

// userSpec is a SubjectAccessReview about u, without the request.
func userSpec(u authnv1.UserInfo) authzv1.SubjectAccessReviewSpec {
	spec := authzv1.SubjectAccessReviewSpec{
		User:   u.Username,
		Groups: u.Groups,
		UID:    u.UID,
	}
	if len(u.Extra) > 0 {
		spec.Extra = make(map[string]authzv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			spec.Extra[k] = authzv1.ExtraValue(v)
		}
	}
	return spec
}

// accessKey identifies a SubjectAccessReview in the cache.
func accessKey(s authzv1.SubjectAccessReviewSpec) string {
	var b strings.Builder
	field := func(v string) { fmt.Fprintf(&b, "%d:%s;", len(v), v) }
	field(s.User)
	field(s.UID)
	// Which kind of request comes first, so a path never reads as a
	// resource's attributes.
	if n := s.NonResourceAttributes; n != nil {
		field("non-resource")
		field(n.Verb)
		field(n.Path)
	}
	if r := s.ResourceAttributes; r != nil {
		field("resource")
		for _, v := range []string{r.Namespace, r.Verb, r.Group, r.Version, r.Resource, r.Subresource, r.Name} {
			field(v)
		}
	}
	groups := slices.Clone(s.Groups)
	slices.Sort(groups)
	for _, g := range groups {
		field(g)
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		field(k)
		for _, v := range s.Extra[k] {
			field(v)
		}
	}
	return digest(b.String())
}

// digest keeps tokens out of memory dumps and bounds key sizes.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// apiReviewer asks the API server.
type apiReviewer struct {
	authn authenticationv1.AuthenticationV1Interface
	authz authorizationv1.AuthorizationV1Interface
}

func (r apiReviewer) ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	res, err := r.authn.TokenReviews().Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return authnv1.TokenReviewStatus{}, fmt.Errorf("creating a TokenReview: %w", err)
	}
	return res.Status, nil
}

func (r apiReviewer) ReviewAccess(ctx context.Context, spec authzv1.SubjectAccessReviewSpec) (authzv1.SubjectAccessReviewStatus, error) {
	res, err := r.authz.SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return authzv1.SubjectAccessReviewStatus{}, fmt.Errorf("creating a SubjectAccessReview: %w", err)
	}
	return res.Status, nil
}
