// Package naming derives the names and label values of the objects an
// IngressDaemonSet generates. The controller and the node health checker
// both use it, so they always agree on a node's Deployment name.
package naming

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// MaxNameLength bounds generated object names and label values, so each is
// also a valid label value and DNS label.
const MaxNameLength = 63

// Shorten returns s when it has at most max characters; otherwise a prefix of
// s plus "-" and a 10-character hash of the whole of s, max characters in
// all. Distinct long inputs get distinct results (up to hash collisions).
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	sum := fmt.Sprintf("%016x", h.Sum64())[:10]
	prefix := strings.TrimRight(s[:max-len(sum)-1], "-.")
	return prefix + "-" + sum
}

// DeploymentName is the name of the Deployment of the IngressDaemonSet ids on node.
func DeploymentName(ids, node string) string {
	return Shorten(ids+"-"+node, MaxNameLength)
}

// HealthCheckerName is the name of the health-checker DaemonSet of the
// IngressDaemonSet ids in namespace for port. It lives in the platform's
// namespace with every other IngressDaemonSet's, so the name carries the
// namespace: a namespace has no dots, so "<namespace>.<ids>-<port>" is
// unique (up to hash collisions once shortened).
func HealthCheckerName(namespace, ids string, port int32) string {
	return Shorten(namespace+"."+ids+"-"+strconv.Itoa(int(port)), MaxNameLength)
}

// LabelValue turns a name into a valid label value (shortened with a hash
// when longer than 63 characters).
func LabelValue(name string) string {
	return Shorten(name, MaxNameLength)
}
