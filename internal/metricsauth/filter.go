// Package metricsauth guards the manager's metrics endpoint: a scraper must
// present a bearer token the API server accepts (a TokenReview) for a user
// allowed to GET the path (a SubjectAccessReview on the non-resource URL),
// as kube-rbac-proxy and controller-runtime's metrics/filters do.
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
	"sync"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
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
	// maxCached bounds each cache (scrapers are few).
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
	authn, err := authenticationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the TokenReview client: %w", err)
	}
	authz, err := authorizationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the SubjectAccessReview client: %w", err)
	}
	g := NewGuard(apiReviewer{authn: authn, authz: authz}, time.Now)
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return g.Handler(log, next), nil
	}, nil
}

// Guard authenticates and authorizes requests through a Reviewer, caching
// the answers.
type Guard struct {
	reviewer Reviewer
	now      func() time.Time
	tokens   *ttlCache[authnv1.TokenReviewStatus]
	access   *ttlCache[bool]
}

// NewGuard returns a Guard asking r.
func NewGuard(r Reviewer, now func() time.Time) *Guard {
	return &Guard{reviewer: r, now: now, tokens: newTTLCache[authnv1.TokenReviewStatus](), access: newTTLCache[bool]()}
}

// Handler wraps next: 401 without an accepted token, 403 for a user not
// allowed the request, 500 when the API server cannot answer.
func (g *Guard) Handler(log logr.Logger, next http.Handler) http.Handler {
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
		allowed, err := g.authorize(req.Context(), AccessSpec(user.User, strings.ToLower(req.Method), req.URL.Path))
		if err != nil {
			msg := fmt.Sprintf("Authorization for user %s failed", user.User.Username)
			log.Error(err, msg)
			http.Error(w, msg, http.StatusInternalServerError)
			return
		}
		if !allowed {
			msg := fmt.Sprintf("Authorization denied for user %s", user.User.Username)
			log.V(4).Info(msg, "path", req.URL.Path)
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, req)
	})
}

func (g *Guard) authenticate(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	key := digest(token)
	if st, ok := g.tokens.get(key, g.now()); ok {
		return st, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	st, err := g.reviewer.ReviewToken(ctx, token)
	if err != nil {
		return authnv1.TokenReviewStatus{}, err
	}
	ttl := tokenTTL
	if !st.Authenticated {
		ttl = tokenFailureTTL
	}
	g.tokens.put(key, st, g.now(), ttl)
	return st, nil
}

func (g *Guard) authorize(ctx context.Context, spec authzv1.SubjectAccessReviewSpec) (bool, error) {
	key := accessKey(spec)
	if allowed, ok := g.access.get(key, g.now()); ok {
		return allowed, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	st, err := g.reviewer.ReviewAccess(ctx, spec)
	if err != nil {
		return false, err
	}
	allowed := st.Allowed && !st.Denied
	ttl := denyTTL
	if allowed {
		ttl = allowTTL
	}
	g.access.put(key, allowed, g.now(), ttl)
	return allowed, nil
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
	spec := authzv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb},
		User:                  u.Username,
		Groups:                u.Groups,
		UID:                   u.UID,
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
	field(s.NonResourceAttributes.Verb)
	field(s.NonResourceAttributes.Path)
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

// ttlCache is a small map of answers with expiry times.
type ttlCache[V any] struct {
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[V any]() *ttlCache[V] {
	return &ttlCache[V]{entries: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// put stores v until now+ttl. A full cache first drops what has expired,
// and everything if that is not enough.
func (c *ttlCache[V]) put(key string, v V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCached {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxCached {
			clear(c.entries)
		}
	}
	c.entries[key] = ttlEntry[V]{value: v, expires: now.Add(ttl)}
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
