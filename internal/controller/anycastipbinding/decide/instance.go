package decide

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// instanceIDPattern is a CVM instance ID.
var instanceIDPattern = regexp.MustCompile(`^ins-[0-9a-z]{8}$`)

// ErrNoInstanceID: the node names no CVM instance.
var ErrNoInstanceID = errors.New("the node has no CVM instance ID")

// InstanceSource says where an instance ID was found.
type InstanceSource string

// Instance ID sources.
const (
	FromLabel      InstanceSource = "label"
	FromProviderID InstanceSource = "providerID"
)

// InstanceID returns the CVM instance behind node: the legacy label
// cloud.tencent.com/node-instance-id (what aia-ip-controller read) or,
// failing that, the last path segment of a Tencent providerID
// (qcloud:///<zone-id>/ins-xxxxxxxx or tencentcloud:///...). A label that
// is present but malformed is an error rather than a fall-through, so a
// typo never binds the address of another instance.
func InstanceID(node *corev1.Node) (string, InstanceSource, error) {
	if v, ok := node.Labels[networkingv1alpha1.LegacyLabelNodeInstanceID]; ok && v != "" {
		if !instanceIDPattern.MatchString(v) {
			return "", FromLabel, fmt.Errorf("label %s=%q is not a CVM instance ID (ins- and 8 lower-case letters or digits)", networkingv1alpha1.LegacyLabelNodeInstanceID, v)
		}
		return v, FromLabel, nil
	}
	if id, ok := InstanceIDFromProviderID(node.Spec.ProviderID); ok {
		return id, FromProviderID, nil
	}
	return "", "", fmt.Errorf("%w: no label %s and no Tencent Cloud providerID", ErrNoInstanceID, networkingv1alpha1.LegacyLabelNodeInstanceID)
}

// InstanceIDFromProviderID parses a Tencent Cloud providerID.
func InstanceIDFromProviderID(providerID string) (string, bool) {
	rest, ok := strings.CutPrefix(providerID, "qcloud://")
	if !ok {
		rest, ok = strings.CutPrefix(providerID, "tencentcloud://")
	}
	if !ok {
		return "", false
	}
	rest = strings.TrimRight(rest, "/")
	id := rest[strings.LastIndex(rest, "/")+1:]
	if !instanceIDPattern.MatchString(id) {
		return "", false
	}
	return id, true
}
