package floatippool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/metricsauth"
	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
)

// GalaxyAPI serves galaxy-ipam's HTTP API (port 9041) as a thin translator
// over FloatIPs and FloatIPPools, so existing scripts keep working:
// GET/POST /v1/ip, GET/DELETE /v1/pool/{name}, POST /v1/pool.
//
// The manager writes with its own identity, so every request is asked
// about as its caller (a bearer token, then a SubjectAccessReview per
// object or namespace; docs/floatippool.md has the table): the API never
// lets a caller do more than the caller could do to the objects directly.
type GalaxyAPI struct {
	Client client.Client
	// Live reads FloatIPs right after pre-allocation (default Client).
	Live client.Reader
	// Pools runs a pool reconcile after POST /v1/pool, so preAllocateIP
	// happens before the reply, as in galaxy.
	Pools *PoolReconciler
	// Guard authenticates callers (Handler) and answers whether they may
	// do each request.
	Guard *metricsauth.Guard
}

// Handler serves the API to callers with a bearer token the API server
// accepts (401 otherwise); each request then needs its own permission
// (403 otherwise).
func (g *GalaxyAPI) Handler(log logr.Logger) http.Handler {
	return g.Guard.Authenticated(log, g)
}

// The objects the API reads and writes, for the SubjectAccessReviews.
var (
	floatIPsResource = authzv1.ResourceAttributes{Group: networkingv1alpha1.GroupVersion.Group, Version: networkingv1alpha1.GroupVersion.Version, Resource: "floatips"}
	poolsResource    = authzv1.ResourceAttributes{Group: networkingv1alpha1.GroupVersion.Group, Version: networkingv1alpha1.GroupVersion.Version, Resource: "floatippools"}
)

// access is one permission a request needs.
func access(res authzv1.ResourceAttributes, verb, namespace, name string) authzv1.ResourceAttributes {
	res.Verb, res.Namespace, res.Name = verb, namespace, name
	return res
}

// allowed reports whether the request's caller may do what attrs say;
// when not, or when it cannot be told, it has answered (403 or 500).
func (g *GalaxyAPI) allowed(w http.ResponseWriter, r *http.Request, attrs authzv1.ResourceAttributes) bool {
	ok, err := g.may(r.Context(), attrs)
	switch {
	case err != nil:
		internalError(w, err)
	case !ok:
		user, _ := metricsauth.UserFrom(r.Context())
		where := "cluster-wide"
		if attrs.Namespace != "" {
			where = "in namespace " + attrs.Namespace
		}
		what := attrs.Resource
		if attrs.Name != "" {
			what += " " + attrs.Name
		}
		reply(w, http.StatusForbidden, galaxyResp{Code: http.StatusForbidden, Message: fmt.Sprintf("forbidden: %s may not %s %s.%s %s", user.Username, attrs.Verb, what, attrs.Group, where)})
	}
	return err == nil && ok
}

// may asks whether the request's caller (ServeHTTP made sure there is
// one) may do what attrs say.
func (g *GalaxyAPI) may(ctx context.Context, attrs authzv1.ResourceAttributes) (bool, error) {
	user, _ := metricsauth.UserFrom(ctx)
	return g.Guard.Allowed(ctx, user, attrs)
}

// galaxyResp is galaxy's httputil.Resp.
type galaxyResp struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// galaxyIP is one item of GET /v1/ip.
type galaxyIP struct {
	IP         string    `json:"ip"`
	Namespace  string    `json:"namespace,omitempty"`
	AppName    string    `json:"appName,omitempty"`
	PodName    string    `json:"podName,omitempty"`
	PoolName   string    `json:"poolName,omitempty"`
	Policy     int       `json:"policy"`
	AppType    string    `json:"appType,omitempty"`
	UpdateTime time.Time `json:"updateTime,omitempty"`
	Status     string    `json:"status,omitempty"`
	Releasable bool      `json:"releasable,omitempty"`

	key      string
	reserved bool
}

// galaxyPage is galaxy's page shape, fields in galaxy's order.
type galaxyPage struct {
	Last             bool       `json:"last"`
	TotalElements    int        `json:"totalElements"`
	TotalPages       int        `json:"totalPages"`
	First            bool       `json:"first"`
	NumberOfElements int        `json:"numberOfElements"`
	Size             int        `json:"size"`
	Number           int        `json:"number"`
	Content          []galaxyIP `json:"content,omitempty"`
}

// ServeHTTP routes the API. A request that did not come through Handler's
// authentication is refused.
func (g *GalaxyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := metricsauth.UserFrom(r.Context()); !ok || g.Guard == nil {
		reply(w, http.StatusUnauthorized, galaxyResp{Code: http.StatusUnauthorized, Message: "unauthorized"})
		return
	}
	switch {
	case r.URL.Path == "/v1/ip" && r.Method == http.MethodGet:
		g.listIPs(w, r)
	case r.URL.Path == "/v1/ip" && r.Method == http.MethodPost:
		g.releaseIPs(w, r)
	case r.URL.Path == "/v1/pool" && r.Method == http.MethodPost:
		g.updatePool(w, r)
	case strings.HasPrefix(r.URL.Path, "/v1/pool/") && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		name, err := wire.PoolNameFromPath(r.URL.Path)
		if err != nil {
			badRequest(w, err)
			return
		}
		if r.Method == http.MethodGet {
			g.getPool(w, r, name)
		} else {
			g.deletePool(w, r, name)
		}
	default:
		http.NotFound(w, r)
	}
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, err error) {
	reply(w, http.StatusBadRequest, galaxyResp{Code: http.StatusBadRequest, Message: fmt.Sprintf("bad request: %v", err)})
}

// bodyError answers a body that could not be decoded: 413 past the
// server's cap (httpserve.Body), else 400.
func bodyError(w http.ResponseWriter, err error) {
	if httpserve.IsTooLarge(err) {
		reply(w, http.StatusRequestEntityTooLarge, galaxyResp{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body larger than %d bytes", maxAPIBody)})
		return
	}
	badRequest(w, err)
}

func internalError(w http.ResponseWriter, err error) {
	reply(w, http.StatusInternalServerError, galaxyResp{Code: http.StatusInternalServerError, Message: fmt.Sprintf("server error: %v", err)})
}

// appTypeName maps a key's type prefix to galaxy's appType.
func appTypeName(prefix string) string {
	switch prefix {
	case ipam.PrefixDeployment:
		return "deployment"
	case ipam.PrefixStatefulSet:
		return "statefulset"
	case ipam.PrefixNoOwner, "":
		return ""
	}
	return strings.TrimSuffix(prefix, "_")
}

// items converts FloatIPs into API items, filling status and releasable
// from the pods.
func (g *GalaxyAPI) items(ctx context.Context, fips []networkingv1alpha1.FloatIP) ([]galaxyIP, error) {
	out := make([]galaxyIP, 0, len(fips))
	for i := range fips {
		f := &fips[i]
		it := galaxyIP{IP: f.Spec.IP, Policy: ipam.LegacyPolicy(f.Spec.ReleasePolicy), key: f.Spec.Key, reserved: isAdminReserved(f)}
		if k, err := ipam.ParseKey(f.Spec.Key); err == nil {
			it.Namespace, it.AppName, it.PodName, it.PoolName = k.Namespace, k.AppName, k.PodName, k.Pool
			it.AppType = appTypeName(k.TypePrefix)
			if k.TypePrefix == ipam.PrefixNoOwner {
				it.AppName = ""
			}
		}
		if f.Status.UpdateTime != nil {
			it.UpdateTime = f.Status.UpdateTime.UTC()
		} else {
			it.UpdateTime = f.CreationTimestamp.UTC()
		}
		it.Releasable = !it.reserved
		if it.PodName != "" {
			var pod corev1.Pod
			err := g.Client.Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: it.PodName}, &pod)
			switch {
			case apierrors.IsNotFound(err):
				it.Status = "Deleted"
			case err != nil:
				return nil, fmt.Errorf("getting pod %s/%s: %w", it.Namespace, it.PodName, err)
			default:
				it.Status = string(pod.Status.Phase)
				it.Releasable = false
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// listIPs answers with the FloatIPs matching the query that the caller may
// list: all of them with list on floatips cluster-wide, else those whose
// key's namespace the caller may list floatips in (a query naming a
// namespace the caller may not list there is refused).
func (g *GalaxyAPI) listIPs(w http.ResponseWriter, r *http.Request) {
	q := wire.ParseListQuery(r.URL.Query())
	key, fuzzy := q.Key, q.Fuzzy
	all, err := g.may(r.Context(), access(floatIPsResource, "list", "", ""))
	if err != nil {
		internalError(w, err)
		return
	}
	if !all && q.Namespace != "" && !g.allowed(w, r, access(floatIPsResource, "list", q.Namespace, "")) {
		return
	}
	var list networkingv1alpha1.FloatIPList
	if err := g.Client.List(r.Context(), &list); err != nil {
		internalError(w, err)
		return
	}
	// The caller's answer per key namespace, asked once each.
	visible := map[string]bool{}
	var matched []networkingv1alpha1.FloatIP
	for _, f := range list.Items {
		if !((fuzzy && strings.Contains(f.Spec.Key, key)) || (!fuzzy && strings.HasPrefix(f.Spec.Key, key))) {
			continue
		}
		if !all {
			ns := keyNamespace(f.Spec.Key)
			ok, seen := visible[ns]
			if !seen {
				if ns != "" {
					if ok, err = g.may(r.Context(), access(floatIPsResource, "list", ns, "")); err != nil {
						internalError(w, err)
						return
					}
				}
				visible[ns] = ok
			}
			if !ok {
				continue
			}
		}
		matched = append(matched, f)
	}
	items, err := g.items(r.Context(), matched)
	if err != nil {
		internalError(w, err)
		return
	}
	slices.SortStableFunc(items, sortFunc(q.Sort))
	page, size := q.Page, q.Size
	start := min(page*size, len(items))
	end := min(start+size, len(items))
	reply(w, http.StatusOK, galaxyPage{
		Last: end >= len(items), First: start == 0, TotalElements: len(items), Size: size,
		NumberOfElements: end - start, TotalPages: (len(items) + size - 1) / size, Number: start / size,
		Content: items[start:end],
	})
}

// keyNamespace is the namespace of a FloatIP's key, "" for a key of no
// namespace (a pool's pre-allocated IPs) or one that does not parse: those
// are listed only to callers who may list FloatIPs cluster-wide.
func keyNamespace(key string) string {
	k, err := ipam.ParseKey(key)
	if err != nil {
		return ""
	}
	return k.Namespace
}

// sortFunc is galaxy's sort parameter: ip, namespace, podname or policy,
// each with " asc" or " desc"; default "ip asc". IPs sort numerically.
func sortFunc(param string) func(a, b galaxyIP) int {
	field, dir, _ := strings.Cut(strings.ToLower(strings.TrimSpace(param)), " ")
	sign := 1
	if dir == "desc" {
		sign = -1
	}
	switch field {
	case "namespace":
		return func(a, b galaxyIP) int { return sign * strings.Compare(a.Namespace, b.Namespace) }
	case "podname":
		return func(a, b galaxyIP) int { return sign * strings.Compare(a.PodName, b.PodName) }
	case "policy":
		return func(a, b galaxyIP) int { return sign * (a.Policy - b.Policy) }
	}
	return func(a, b galaxyIP) int {
		x, errx := netip.ParseAddr(a.IP)
		y, erry := netip.ParseAddr(b.IP)
		if errx != nil || erry != nil {
			return sign * strings.Compare(a.IP, b.IP)
		}
		return sign * x.Compare(y)
	}
}

type releaseResp struct {
	Code       int      `json:"code"`
	Message    string   `json:"message"`
	Unreleased []string `json:"unreleased,omitempty"`
	Reasons    []string `json:"reasons,omitempty"`
}

func (g *GalaxyAPI) releaseIPs(w http.ResponseWriter, r *http.Request) {
	release, err := wire.DecodeReleaseRequest(r.Body)
	if err != nil {
		bodyError(w, err)
		return
	}
	ctx := r.Context()
	// Every IP's deletion is allowed before any is released: a request the
	// caller may not make in full changes nothing. The key's namespace is
	// where (a key of no namespace needs the permission cluster-wide): one
	// question per namespace, and per FloatIP only where the caller may
	// delete some FloatIPs there but not all (resourceNames).
	anyName := map[string]bool{}
	for _, it := range release {
		ok, seen := anyName[it.Namespace]
		if !seen {
			if ok, err = g.may(ctx, access(floatIPsResource, "delete", it.Namespace, "")); err != nil {
				internalError(w, err)
				return
			}
			anyName[it.Namespace] = ok
		}
		if !ok && !g.allowed(w, r, access(floatIPsResource, "delete", it.Namespace, ipam.NameForIP(it.IP))) {
			return
		}
	}
	var resp releaseResp
	for _, it := range release {
		ip := it.IP
		var f networkingv1alpha1.FloatIP
		err := g.Client.Get(ctx, client.ObjectKey{Name: ipam.NameForIP(ip)}, &f)
		reason := ""
		switch {
		case apierrors.IsNotFound(err):
			reason = "not allocated"
		case err != nil:
			internalError(w, err)
			return
		case f.Spec.Key != it.Key:
			reason = fmt.Sprintf("allocated to %s, not %s", f.Spec.Key, it.Key)
		case isAdminReserved(&f):
			reason = "reserved by an admin"
		}
		if reason == "" {
			items, err := g.items(ctx, []networkingv1alpha1.FloatIP{f})
			if err != nil {
				internalError(w, err)
				return
			}
			if !items[0].Releasable {
				badRequest(w, fmt.Errorf("%s is not releasable", it.IP))
				return
			}
			rv := f.ResourceVersion
			if err := g.Client.Delete(ctx, &f, client.Preconditions{UID: &f.UID, ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
				reason = err.Error()
			}
		}
		if reason != "" {
			resp.Unreleased = append(resp.Unreleased, ip.String())
			resp.Reasons = append(resp.Reasons, reason)
		}
	}
	if len(resp.Unreleased) > 0 {
		resp.Code, resp.Message = http.StatusAccepted, "Unreleased ips have been released or allocated to other pods, or are not within valid range"
		reply(w, http.StatusAccepted, resp)
		return
	}
	resp.Code = http.StatusOK
	reply(w, http.StatusOK, resp)
}

func (g *GalaxyAPI) getPool(w http.ResponseWriter, r *http.Request, name string) {
	if !g.allowed(w, r, access(poolsResource, "get", "", name)) {
		return
	}
	var p networkingv1alpha1.FloatIPPool
	if err := g.Client.Get(r.Context(), client.ObjectKey{Name: name}, &p); err != nil {
		if apierrors.IsNotFound(err) {
			reply(w, http.StatusNotFound, galaxyResp{Code: http.StatusNotFound, Message: fmt.Sprintf("not found: pool %s", name)})
			return
		}
		internalError(w, err)
		return
	}
	size := 0
	if p.Spec.Size != nil {
		size = int(*p.Spec.Size)
	}
	reply(w, http.StatusOK, struct {
		galaxyResp
		Pool wire.Pool `json:"pool"`
	}{galaxyResp{Code: http.StatusOK}, wire.Pool{Name: p.Name, Size: size, PreAllocateIP: p.Spec.PreAllocate}})
}

type updatePoolResp struct {
	galaxyResp
	RealPoolSize int `json:"realPoolSize"`
}

func (g *GalaxyAPI) updatePool(w http.ResponseWriter, r *http.Request) {
	req, err := wire.DecodePoolRequest(r.Body)
	if err != nil {
		bodyError(w, err)
		return
	}
	ctx := r.Context()
	size := int32(req.Size) //nolint:gosec // wire.DecodePoolRequest bounds it by wire.MaxPoolSize
	var p networkingv1alpha1.FloatIPPool
	err = g.Client.Get(ctx, client.ObjectKey{Name: req.Name}, &p)
	verb := "update"
	if apierrors.IsNotFound(err) {
		verb = "create"
	}
	if (err == nil || apierrors.IsNotFound(err)) && !g.allowed(w, r, access(poolsResource, verb, "", req.Name)) {
		return
	}
	switch {
	case apierrors.IsNotFound(err):
		p = networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: req.Name},
			Spec:       networkingv1alpha1.FloatIPPoolSpec{Size: &size, PreAllocate: req.PreAllocateIP},
		}
		if err := g.Client.Create(ctx, &p); err != nil {
			badRequest(w, err)
			return
		}
	case err != nil:
		internalError(w, err)
		return
	default:
		before := p.DeepCopy()
		p.Spec.Size, p.Spec.PreAllocate = &size, req.PreAllocateIP
		if err := g.Client.Patch(ctx, &p, client.MergeFrom(before)); err != nil {
			badRequest(w, err)
			return
		}
	}
	if !req.PreAllocateIP {
		reply(w, http.StatusOK, updatePoolResp{galaxyResp: galaxyResp{Code: http.StatusOK}})
		return
	}
	if g.Pools != nil {
		for range 2 { // the first pass may only add the finalizer
			if _, err := g.Pools.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: req.Name}}); err != nil {
				internalError(w, err)
				return
			}
		}
	}
	var live client.Reader = g.Client
	if g.Live != nil {
		live = g.Live
	}
	var list networkingv1alpha1.FloatIPList
	if err := live.List(ctx, &list); err != nil {
		internalError(w, err)
		return
	}
	held := 0
	prefix := ipam.PoolPrefix(req.Name)
	for _, f := range list.Items {
		if strings.HasPrefix(f.Spec.Key, prefix) {
			held++
		}
	}
	if held < req.Size {
		reply(w, http.StatusAccepted, updatePoolResp{galaxyResp{Code: http.StatusAccepted, Message: "No enough IPs"}, held})
		return
	}
	reply(w, http.StatusOK, updatePoolResp{galaxyResp{Code: http.StatusOK}, held})
}

func (g *GalaxyAPI) deletePool(w http.ResponseWriter, r *http.Request, name string) {
	if !g.allowed(w, r, access(poolsResource, "delete", "", name)) {
		return
	}
	p := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := g.Client.Delete(r.Context(), p); err != nil && !apierrors.IsNotFound(err) {
		internalError(w, err)
		return
	}
	reply(w, http.StatusOK, galaxyResp{Code: http.StatusOK})
}
