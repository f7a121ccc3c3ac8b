package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// stubReviewer answers from maps and counts the reviews asked.
type stubReviewer struct {
	users                map[string]authnv1.UserInfo // by token
	allowed              map[string]bool             // by user name
	tokenErr, accessErr  error
	tokenCalls, sarCalls int
	lastSpec             authzv1.SubjectAccessReviewSpec
}

func (s *stubReviewer) ReviewToken(_ context.Context, token string) (authnv1.TokenReviewStatus, error) {
	s.tokenCalls++
	if s.tokenErr != nil {
		return authnv1.TokenReviewStatus{}, s.tokenErr
	}
	u, ok := s.users[token]
	return authnv1.TokenReviewStatus{Authenticated: ok, User: u}, nil
}

func (s *stubReviewer) ReviewAccess(_ context.Context, spec authzv1.SubjectAccessReviewSpec) (authzv1.SubjectAccessReviewStatus, error) {
	s.sarCalls++
	s.lastSpec = spec
	if s.accessErr != nil {
		return authzv1.SubjectAccessReviewStatus{}, s.accessErr
	}
	return authzv1.SubjectAccessReviewStatus{Allowed: s.allowed[spec.User]}, nil
}

func newStub() *stubReviewer {
	return &stubReviewer{
		users: map[string]authnv1.UserInfo{
			"prom":  {Username: "system:serviceaccount:monitoring:prometheus", UID: "u1", Groups: []string{"system:serviceaccounts"}, Extra: map[string]authnv1.ExtraValue{"k": {"v"}}},
			"other": {Username: "system:serviceaccount:default:other"},
		},
		allowed: map[string]bool{"system:serviceaccount:monitoring:prometheus": true},
	}
}

func serve(g *Guard, header string) int {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if header != "" {
		req.Header.Set("Authorization", header)
	}
	rec := httptest.NewRecorder()
	g.Handler(logr.Discard(), next).ServeHTTP(rec, req)
	return rec.Code
}

func TestGuard(t *testing.T) {
	for _, tc := range []struct {
		name                string
		header              string
		tokenErr, accessErr error
		want                int
	}{
		{name: "no header", want: http.StatusUnauthorized},
		{name: "not a bearer token", header: "Basic cHJvbTpwdw==", want: http.StatusUnauthorized},
		{name: "empty bearer token", header: "Bearer ", want: http.StatusUnauthorized},
		{name: "token the API server does not accept", header: "Bearer nope", want: http.StatusUnauthorized},
		{name: "the TokenReview fails", header: "Bearer prom", tokenErr: errors.New("boom"), want: http.StatusInternalServerError},
		{name: "user not allowed", header: "Bearer other", want: http.StatusForbidden},
		{name: "the SubjectAccessReview fails", header: "Bearer prom", accessErr: errors.New("boom"), want: http.StatusInternalServerError},
		{name: "allowed: served", header: "Bearer prom", want: http.StatusTeapot},
		{name: "scheme in another case", header: "bearer prom", want: http.StatusTeapot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub()
			s.tokenErr, s.accessErr = tc.tokenErr, tc.accessErr
			if got := serve(NewGuard(s, clock.RealClock{}), tc.header); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
}

func TestGuardAsksForTheRequestAsTheUser(t *testing.T) {
	s := newStub()
	serve(NewGuard(s, clock.RealClock{}), "Bearer prom")
	want := authzv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		User:                  "system:serviceaccount:monitoring:prometheus", UID: "u1", Groups: []string{"system:serviceaccounts"},
		Extra: map[string]authzv1.ExtraValue{"k": {"v"}},
	}
	if diff := cmp.Diff(want, s.lastSpec); diff != "" {
		t.Errorf("SubjectAccessReview (-want +got):\n%s", diff)
	}
}

func TestGuardCachesAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		header    string
		after     time.Duration
		wantCalls [2]int // TokenReviews, SubjectAccessReviews after the second request
	}{
		{name: "allowed, within both lifetimes", header: "Bearer prom", after: 30 * time.Second, wantCalls: [2]int{1, 1}},
		{name: "allowed, token expired, access not", header: "Bearer prom", after: 2 * time.Minute, wantCalls: [2]int{2, 1}},
		{name: "allowed, both expired", header: "Bearer prom", after: 6 * time.Minute, wantCalls: [2]int{2, 2}},
		{name: "denied, within 30 s", header: "Bearer other", after: 20 * time.Second, wantCalls: [2]int{1, 1}},
		{name: "denied, after 30 s", header: "Bearer other", after: 31 * time.Second, wantCalls: [2]int{1, 2}},
		{name: "refused token, within 10 s", header: "Bearer nope", after: 5 * time.Second, wantCalls: [2]int{1, 0}},
		{name: "refused token, after 10 s", header: "Bearer nope", after: 11 * time.Second, wantCalls: [2]int{2, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
			s := newStub()
			g := NewGuard(s, clk)
			first := serve(g, tc.header)
			clk.Step(tc.after)
			if second := serve(g, tc.header); second != first {
				t.Errorf("second answer %d, first %d", second, first)
			}
			if got := [2]int{s.tokenCalls, s.sarCalls}; got != tc.wantCalls {
				t.Errorf("reviews asked %v, want %v", got, tc.wantCalls)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   string
		ok     bool
	}{
		{"Bearer abc", "abc", true},
		{"  bearer   abc  ", "abc", true},
		{"BEARER abc", "abc", true},
		{"Bearer", "", false},
		{"Bearer  ", "", false},
		{"Basic abc", "", false},
		{"", "", false},
	} {
		got, ok := BearerToken(tc.header)
		if got != tc.want || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAccessKeyIgnoresOrderButNotContent(t *testing.T) {
	spec := func(groups []string, extra map[string]authzv1.ExtraValue, path string) authzv1.SubjectAccessReviewSpec {
		return authzv1.SubjectAccessReviewSpec{User: "u", Groups: groups, Extra: extra,
			NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: "get"}}
	}
	a := accessKey(spec([]string{"a", "b"}, map[string]authzv1.ExtraValue{"x": {"1"}, "y": {"2"}}, "/metrics"))
	if b := accessKey(spec([]string{"b", "a"}, map[string]authzv1.ExtraValue{"y": {"2"}, "x": {"1"}}, "/metrics")); a != b {
		t.Error("the same request in another order got another key")
	}
	for _, other := range []authzv1.SubjectAccessReviewSpec{
		spec([]string{"a"}, map[string]authzv1.ExtraValue{"x": {"1"}, "y": {"2"}}, "/metrics"),
		spec([]string{"a", "b"}, map[string]authzv1.ExtraValue{"x": {"1"}}, "/metrics"),
		spec([]string{"a", "b"}, map[string]authzv1.ExtraValue{"x": {"1"}, "y": {"2"}}, "/debug"),
		// Concatenation must not collide: "ab" + "" vs "a" + "b".
		spec([]string{"ab"}, map[string]authzv1.ExtraValue{"x": {"1"}, "y": {"2"}}, "/metrics"),
	} {
		if accessKey(other) == a {
			t.Errorf("a different request got the same key: %+v", other)
		}
	}
}

func TestCacheBounded(t *testing.T) {
	c := newCache(clocktesting.NewFakePassiveClock(time.Unix(1_700_000_000, 0)))
	for i := range maxCached + 10 {
		c.Add(digest(string(rune(i))), true, time.Minute)
	}
	if n := len(c.Keys()); n > maxCached {
		t.Errorf("%d entries, want at most %d", n, maxCached)
	}
}

// TestAllowedAsksAboutTheResource: Allowed asks about the object or
// collection as the user, and the answers for two requests that differ in
// any attribute, or in being about a resource or a path, are kept apart.
func TestAllowedAsksAboutTheResource(t *testing.T) {
	s := newStub()
	g := NewGuard(s, clock.RealClock{})
	user := s.users["prom"]
	attrs := authzv1.ResourceAttributes{Namespace: "team-a", Verb: "delete", Group: "networking.edgeplane.io", Version: "v1alpha1", Resource: "floatips", Name: "10-0-0-1"}
	ok, err := g.Allowed(context.Background(), user, attrs)
	if err != nil || !ok {
		t.Fatalf("Allowed = %v, %v", ok, err)
	}
	if s.lastSpec.NonResourceAttributes != nil || s.lastSpec.ResourceAttributes == nil || *s.lastSpec.ResourceAttributes != attrs || s.lastSpec.User != user.Username {
		t.Errorf("SubjectAccessReview %+v", s.lastSpec)
	}
	keys := map[string]string{accessKey(ResourceAccessSpec(user, attrs)): "the request"}
	for name, edit := range map[string]func(*authzv1.ResourceAttributes){
		"another namespace": func(a *authzv1.ResourceAttributes) { a.Namespace = "team-b" },
		"cluster-wide":      func(a *authzv1.ResourceAttributes) { a.Namespace = "" },
		"another verb":      func(a *authzv1.ResourceAttributes) { a.Verb = "list" },
		"another resource":  func(a *authzv1.ResourceAttributes) { a.Resource = "floatippools" },
		"another name":      func(a *authzv1.ResourceAttributes) { a.Name = "10-0-0-2" },
		"another group":     func(a *authzv1.ResourceAttributes) { a.Group = "" },
	} {
		other := attrs
		edit(&other)
		k := accessKey(ResourceAccessSpec(user, other))
		if prev, seen := keys[k]; seen {
			t.Errorf("%s has the cache key of %s", name, prev)
		}
		keys[k] = name
	}
	path := accessKey(AccessSpec(user, "delete", "team-a"))
	if _, seen := keys[path]; seen {
		t.Error("a path request has a resource request's cache key")
	}
	// Denied for a user the stub does not allow.
	if ok, err := g.Allowed(context.Background(), s.users["other"], attrs); err != nil || ok {
		t.Errorf("Allowed for another user = %v, %v", ok, err)
	}
}

// TestAuthenticated: only a request with an accepted token reaches next,
// which finds the user in its context.
func TestAuthenticated(t *testing.T) {
	s := newStub()
	g := NewGuard(s, clock.RealClock{})
	var got string
	h := g.Authenticated(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := UserFrom(r.Context())
		if !ok {
			t.Error("no user in the context")
		}
		got = u.Username
	}))
	for header, want := range map[string]int{"": http.StatusUnauthorized, "Bearer nope": http.StatusUnauthorized, "Bearer other": http.StatusOK} {
		got = ""
		req := httptest.NewRequest(http.MethodGet, "/v1/ip", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%q: %d, want %d", header, rec.Code, want)
		}
		if want == http.StatusOK && got != "system:serviceaccount:default:other" {
			t.Errorf("%q: next saw user %q", header, got)
		}
	}
	if _, ok := UserFrom(context.Background()); ok {
		t.Error("a user in a context no request authenticated")
	}
}
