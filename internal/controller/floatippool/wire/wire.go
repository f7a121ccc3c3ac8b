// Package wire decodes and checks the requests of the two HTTP APIs the
// FloatIPPool controller serves: kube-scheduler's extender contract
// (filter, bind) and galaxy-ipam's API (/v1/ip, /v1/pool). It is pure, so
// every decoder is fuzzed apart from the servers that use it.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// The scheduler-extender wire types (k8s.io/kube-scheduler/extender/v1),
// which carry no JSON tags: field names are the JSON keys.

// ExtenderArgs is the body of a filter request.
type ExtenderArgs struct {
	Pod       *corev1.Pod
	Nodes     *corev1.NodeList
	NodeNames *[]string
}

// ExtenderFilterResult is the reply to a filter request.
type ExtenderFilterResult struct {
	Nodes                      *corev1.NodeList
	NodeNames                  *[]string
	FailedNodes                map[string]string
	FailedAndUnresolvableNodes map[string]string
	Error                      string
}

// ExtenderBindingArgs is the body of a bind request.
type ExtenderBindingArgs struct {
	PodName      string
	PodNamespace string
	PodUID       types.UID
	Node         string
}

// ExtenderBindingResult is the reply to a bind request.
type ExtenderBindingResult struct {
	Error string
}

// HostPriority is one entry of a priority reply.
type HostPriority struct {
	Host  string
	Score int64
}

// decodeOne decodes exactly one JSON value; trailing data is an error, so
// two concatenated requests are not half-served.
func decodeOne(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON body")
	}
	return nil
}

// DecodeFilterArgs decodes a filter request; it must name a pod and send
// nodes or node names.
func DecodeFilterArgs(r io.Reader) (ExtenderArgs, error) {
	var args ExtenderArgs
	if err := decodeOne(r, &args); err != nil {
		return ExtenderArgs{}, fmt.Errorf("decoding filter request: %w", err)
	}
	if args.Pod == nil {
		return ExtenderArgs{}, errors.New("decoding filter request: no pod")
	}
	if args.Pod.Name == "" || args.Pod.Namespace == "" {
		return ExtenderArgs{}, errors.New("decoding filter request: the pod has no name or namespace")
	}
	return args, nil
}

// DecodeBindingArgs decodes a bind request; pod name, namespace and node
// are required.
func DecodeBindingArgs(r io.Reader) (ExtenderBindingArgs, error) {
	var args ExtenderBindingArgs
	if err := decodeOne(r, &args); err != nil {
		return ExtenderBindingArgs{}, fmt.Errorf("decoding bind request: %w", err)
	}
	if args.PodName == "" || args.PodNamespace == "" || args.Node == "" {
		return ExtenderBindingArgs{}, errors.New("decoding bind request: PodName, PodNamespace and Node are required")
	}
	return args, nil
}

// Galaxy's page limits.
const (
	MaxPage     = 99999
	MaxSize     = 9999
	DefaultSize = 10
)

// ListQuery is GET /v1/ip's query.
type ListQuery struct {
	// Key is the FloatIP key to match: a substring when Fuzzy (galaxy's
	// keyword), otherwise a prefix built from appType, namespace, appName,
	// podName and poolName.
	Key   string
	Fuzzy bool
	// Namespace is the namespace the query names ("" with a keyword).
	Namespace string
	// Sort is galaxy's sort parameter, as sent.
	Sort string
	// Page is 0-based and at most MaxPage; Size is 1..MaxSize.
	Page, Size int
}

// ParseListQuery reads GET /v1/ip's query the way galaxy does: unparsable
// or out-of-range page and size fall back to their defaults.
func ParseListQuery(q url.Values) ListQuery {
	out := ListQuery{Sort: q.Get("sort"), Page: parsePage(q.Get("page")), Size: parseSize(q.Get("size"))}
	if kw := q.Get("keyword"); kw != "" {
		out.Key, out.Fuzzy = kw, true
		return out
	}
	out.Namespace = q.Get("namespace")
	out.Key = ipam.QueryKey(typePrefix(q.Get("appType")), out.Namespace, q.Get("appName"), q.Get("podName"), q.Get("poolName"))
	return out
}

// typePrefix is galaxy's default: no appType means statefulset.
func typePrefix(appType string) string {
	if appType == "" {
		return ipam.PrefixStatefulSet
	}
	return ipam.TypePrefixForAppType(appType)
}

func parsePage(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return min(n, MaxPage)
}

func parseSize(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return DefaultSize
	}
	return min(n, MaxSize)
}

// ReleaseItem is one IP of POST /v1/ip, with the key it must be
// allocated to for the release to go ahead and that key's namespace (where
// the caller must be allowed to delete it).
type ReleaseItem struct {
	IP        netip.Addr
	Key       string
	Namespace string
}

// releaseIP is galaxy's request item (only the fields a release reads).
type releaseIP struct {
	IP        string `json:"ip"`
	Namespace string `json:"namespace,omitempty"`
	AppName   string `json:"appName,omitempty"`
	PodName   string `json:"podName,omitempty"`
	PoolName  string `json:"poolName,omitempty"`
	AppType   string `json:"appType,omitempty"`
}

// MaxReleaseItems bounds one release request.
const MaxReleaseItems = 10000

// DecodeReleaseRequest decodes POST /v1/ip ({"ips": [...]}). Every IP must
// parse; IPv4-mapped IPv6 addresses are unmapped.
func DecodeReleaseRequest(r io.Reader) ([]ReleaseItem, error) {
	var req struct {
		IPs []releaseIP `json:"ips"`
	}
	if err := decodeOne(r, &req); err != nil {
		return nil, err
	}
	if len(req.IPs) > MaxReleaseItems {
		return nil, fmt.Errorf("%d ips in one request, at most %d", len(req.IPs), MaxReleaseItems)
	}
	out := make([]ReleaseItem, 0, len(req.IPs))
	for _, it := range req.IPs {
		ip, err := netip.ParseAddr(it.IP)
		if err != nil {
			return nil, fmt.Errorf("%q is not a valid ip", it.IP)
		}
		out = append(out, ReleaseItem{
			IP:        ip.Unmap(),
			Key:       ipam.QueryKey(typePrefix(it.AppType), it.Namespace, it.AppName, it.PodName, it.PoolName),
			Namespace: it.Namespace,
		})
	}
	return out, nil
}

// Pool is the pool object of /v1/pool.
type Pool struct {
	Name          string `json:"name"`
	Size          int    `json:"size"`
	PreAllocateIP bool   `json:"preAllocateIP"`
}

// MaxPoolSize bounds the size a POST /v1/pool sets: with preAllocateIP the
// pool reserves that many IPs at once, one FloatIP object each, so a size
// of 2^30 would take every free IP of every pool it draws from and fill
// etcd. A larger pool is written as a FloatIPPool object.
const MaxPoolSize = 4096

// DecodePoolRequest decodes POST /v1/pool. The name must be a valid
// object name without "_" (the key separator); the size must be 0..MaxPoolSize.
func DecodePoolRequest(r io.Reader) (Pool, error) {
	var p Pool
	if err := decodeOne(r, &p); err != nil {
		return Pool{}, err
	}
	if err := CheckPoolName(p.Name); err != nil {
		return Pool{}, err
	}
	if p.Size < 0 || p.Size > MaxPoolSize {
		return Pool{}, fmt.Errorf("size %d is not within 0..%d", p.Size, MaxPoolSize)
	}
	return p, nil
}

// CheckPoolName accepts what can name a FloatIPPool and a galaxy pool: a
// DNS subdomain without "_" (the key separator).
func CheckPoolName(name string) error {
	if name == "" || strings.Contains(name, "_") {
		return fmt.Errorf("pool name %q is empty or contains \"_\"", name)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("pool name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// PoolNameFromPath is the {name} of /v1/pool/{name}.
func PoolNameFromPath(path string) (string, error) {
	name, ok := strings.CutPrefix(path, "/v1/pool/")
	if !ok {
		return "", fmt.Errorf("%q is not under /v1/pool/", path)
	}
	if err := CheckPoolName(name); err != nil {
		return "", err
	}
	return name, nil
}

// SchedulerConfig is a KubeSchedulerConfiguration that sends the pods
// requesting the float-IP resource to the extender (galaxy-ipam's filter +
// bind contract), the shape of examples/floatippool/kube-scheduler-config.yaml.
type SchedulerConfig struct {
	// Kubeconfig is kube-scheduler's own kubeconfig.
	Kubeconfig string
	// URLPrefix is where the extender serves (https://), without /v1.
	URLPrefix string
	// CertDir holds the scheduler's client certificate for the extender
	// and the CA that verifies the extender: tls.crt, tls.key and ca.crt,
	// the keys of the Secret the manager (or cert-manager) keeps them in.
	CertDir string
	// ServerName, if set, is the name the extender's certificate must
	// carry, when URLPrefix reaches it by another (an IP address).
	ServerName string
	// Resource is the extended resource float-IP pods request.
	Resource string
	// NodeCacheCapable makes the scheduler send node names, not nodes.
	NodeCacheCapable bool
	// QPS, when positive, raises the scheduler's client limits (burst twice that).
	QPS int
}

// YAML renders the configuration.
func (c SchedulerConfig) YAML() string {
	limits := ""
	if c.QPS > 0 {
		limits = fmt.Sprintf("  qps: %d\n  burst: %d\n", c.QPS, 2*c.QPS)
	}
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
%sleaderElection:
  leaderElect: false
extenders:
- urlPrefix: %q
  filterVerb: filter
  bindVerb: bind
  weight: 1
  httpTimeout: 30s
  nodeCacheCapable: %t
  enableHTTPS: true
  tlsConfig:
    certFile: %q
    keyFile: %q
    caFile: %q
    serverName: %q
  managedResources:
  - name: %q
    ignoredByScheduler: true
`, c.Kubeconfig, limits, strings.TrimSuffix(c.URLPrefix, "/")+"/v1", c.NodeCacheCapable,
		path.Join(c.CertDir, "tls.crt"), path.Join(c.CertDir, "tls.key"), path.Join(c.CertDir, "ca.crt"), c.ServerName, c.Resource)
}
