package ipam

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Galaxy's allocation-key vocabulary.
const (
	// PrefixDeployment is the app-type prefix of Deployment pods (owned by a
	// ReplicaSet).
	PrefixDeployment = "dp_"
	// PrefixStatefulSet is the app-type prefix of StatefulSet pods.
	PrefixStatefulSet = "sts_"
	// PrefixNoOwner is the app-type prefix of pods without an owner; their
	// app name is "NULL" too.
	PrefixNoOwner = "NULL_"
	// poolKeyPrefix starts the key of a pod that shares a named pool.
	poolKeyPrefix = "pool__"
)

// AppType is the kind of workload a key belongs to.
type AppType string

// App types.
const (
	AppDeployment  AppType = "deployment"
	AppStatefulSet AppType = "statefulset"
	AppNone        AppType = "none"
)

// Key is galaxy's allocation key, parsed. A Key with an empty PodName is a
// reservation for the next pod of its workload (Deployment) or pool.
type Key struct {
	// Pool is the shared pool (tke.cloud.tencent.com/eni-ip-pool), if any.
	Pool string
	// TypePrefix is "dp_", "sts_", "NULL_" or "<lower kind>_". Empty only in
	// a bare pool reservation ("pool__<pool>_").
	TypePrefix string
	Namespace  string
	AppName    string
	PodName    string
}

// String formats k as galaxy stores it.
func (k Key) String() string {
	var b strings.Builder
	if k.Pool != "" {
		b.WriteString(PoolPrefix(k.Pool))
	}
	if k.TypePrefix == "" {
		return b.String()
	}
	b.WriteString(k.TypePrefix)
	b.WriteString(k.Namespace)
	b.WriteByte('_')
	b.WriteString(k.AppName)
	b.WriteByte('_')
	b.WriteString(k.PodName)
	return b.String()
}

// PoolPrefix is the reservation key of a shared pool: "pool__<pool>_".
func PoolPrefix(pool string) string { return poolKeyPrefix + pool + "_" }

// GroupOfKey is the shared pool whose prefix (PoolPrefix) starts key, or ""
// when none does. Pool names cannot hold "_", so the name ends at the next
// one; unlike ParseKey it reads no further, so a key whose rest is malformed
// still names its pool.
func GroupOfKey(key string) string {
	rest, ok := strings.CutPrefix(key, poolKeyPrefix)
	if !ok {
		return ""
	}
	pool, _, ok := strings.Cut(rest, "_")
	if !ok {
		return ""
	}
	return pool
}

// ReservationKey is the key an IP gets when it is kept for the next pod of
// k's workload: the pool prefix for a pool pod, else the workload prefix
// ("dp_<ns>_<deployment>_").
func (k Key) ReservationKey() string {
	if k.Pool != "" {
		return PoolPrefix(k.Pool)
	}
	r := k
	r.PodName = ""
	return r.String()
}

// AppType returns the kind of workload k belongs to, or the lower-case kind
// for custom workloads.
func (k Key) AppType() AppType {
	switch k.TypePrefix {
	case PrefixDeployment:
		return AppDeployment
	case PrefixStatefulSet:
		return AppStatefulSet
	case PrefixNoOwner, "":
		return AppNone
	}
	return AppType(strings.TrimSuffix(k.TypePrefix, "_"))
}

// IsReservation reports whether k names no pod.
func (k Key) IsReservation() bool { return k.PodName == "" }

// ParseKey parses a galaxy key. Kubernetes names cannot contain "_", so the
// parts are separated by it; a pool name containing "_" cannot be
// represented (galaxy mis-parses it) and is rejected.
func ParseKey(s string) (Key, error) {
	var k Key
	rest := s
	if strings.HasPrefix(rest, poolKeyPrefix) {
		rest = rest[len(poolKeyPrefix):]
		pool, after, ok := strings.Cut(rest, "_")
		if !ok || pool == "" {
			return Key{}, fmt.Errorf("key %q: pool prefix without a pool name", s)
		}
		k.Pool, rest = pool, after
		if rest == "" {
			return k, nil
		}
	}
	parts := strings.Split(rest, "_")
	if len(parts) != 4 {
		return Key{}, fmt.Errorf("key %q: want <type>_<namespace>_<app>_<pod>", s)
	}
	if parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Key{}, fmt.Errorf("key %q: empty type, namespace or app", s)
	}
	k.TypePrefix, k.Namespace, k.AppName, k.PodName = parts[0]+"_", parts[1], parts[2], parts[3]
	return k, nil
}

// PodIndexPattern is what galaxy requires of a pod name of a custom workload
// with a retaining policy: the workload name and a numeric suffix.
var PodIndexPattern = regexp.MustCompile(`^.*-([0-9]+)$`)

// PodIndex returns the numeric suffix of a pod name, or -1.
func PodIndex(podName string) int {
	m := PodIndexPattern.FindStringSubmatch(podName)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// Owner is the workload a pod belongs to, as galaxy infers it.
type Owner struct {
	// Kind is the workload kind: Deployment (from a ReplicaSet owner),
	// StatefulSet, another controller kind, or "" for none.
	Kind string
	// APIVersion of the owner reference (for custom kinds).
	APIVersion string
	// Name of the workload: for a Deployment, the ReplicaSet name up to its
	// last "-".
	Name string
}

// PodOwner infers a pod's workload from its controller owner reference (or,
// as galaxy does, its first owner reference when none is the controller).
func PodOwner(pod *corev1.Pod) Owner {
	refs := pod.OwnerReferences
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			refs = []metav1.OwnerReference{ref}
			break
		}
	}
	for _, ref := range refs {
		switch ref.Kind {
		case "ReplicaSet":
			name := ref.Name
			if i := strings.LastIndex(name, "-"); i > 0 {
				name = name[:i]
			}
			return Owner{Kind: "Deployment", APIVersion: "apps/v1", Name: name}
		default:
			return Owner{Kind: ref.Kind, APIVersion: ref.APIVersion, Name: ref.Name}
		}
	}
	return Owner{}
}

// KeyFor returns the allocation key of a pod owned by owner, optionally in a
// shared pool.
func KeyFor(namespace, podName string, owner Owner, pool string) Key {
	k := Key{Pool: pool, Namespace: namespace, PodName: podName}
	switch owner.Kind {
	case "":
		k.TypePrefix, k.AppName = PrefixNoOwner, "NULL"
	case "Deployment":
		k.TypePrefix, k.AppName = PrefixDeployment, owner.Name
	case "StatefulSet":
		k.TypePrefix, k.AppName = PrefixStatefulSet, owner.Name
	default:
		k.TypePrefix, k.AppName = strings.ToLower(owner.Kind)+"_", owner.Name
	}
	return k
}

// TypePrefixForAppType maps the appType parameter of galaxy's HTTP API
// ("statefulset", "deployment", "tapp", ...) to a key prefix.
func TypePrefixForAppType(appType string) string {
	switch strings.ToLower(appType) {
	case "statefulset", "statefulsets", "sts":
		return PrefixStatefulSet
	case "deployment", "deployments", "dp":
		return PrefixDeployment
	}
	return strings.ToLower(appType) + "_"
}

// QueryKey builds the key (or key prefix) galaxy's HTTP API matches for the
// given parameters, as galaxy's NewKeyObj does: the pool prefix alone when
// only a pool is given, "" when nothing is, else
// [pool__<pool>_]<type><ns>_<app>_<pod>.
func QueryKey(typePrefix, namespace, appName, podName, pool string) string {
	prefix := ""
	if pool != "" {
		prefix = PoolPrefix(pool)
		if appName == "" {
			return prefix
		}
	}
	if pool == "" && appName == "" && namespace == "" {
		return ""
	}
	return prefix + typePrefix + namespace + "_" + appName + "_" + podName
}
