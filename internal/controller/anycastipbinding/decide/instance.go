package decide

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// instanceIDPattern is a CVM instance ID.
var instanceIDPattern = regexp.MustCompile(`^ins-[0-9a-z]{8}$`)

// Why an instance cannot be acted on.
var (
	// ErrNoInstanceID: the node names no CVM instance.
	ErrNoInstanceID = errors.New("the node has no CVM instance ID")
	// ErrInstanceChanged: the node now names another instance than the
	// one the binding recorded.
	ErrInstanceChanged = errors.New("the node's instance changed")
)

// InstanceID returns the CVM instance behind node: the last path segment
// of its Tencent spec.providerID (qcloud:///<zone-id>/ins-xxxxxxxx or
// tencentcloud:///...). Only the providerID is trusted: it is set when the
// node registers and the API server never lets it change, while a label
// (aia-ip-controller read cloud.tencent.com/node-instance-id) is the
// node's own to rewrite at any time, so a compromised kubelet could name a
// victim's instance with it. The label is ignored.
func InstanceID(node *corev1.Node) (string, error) {
	if id, ok := InstanceIDFromProviderID(node.Spec.ProviderID); ok {
		return id, nil
	}
	if node.Spec.ProviderID == "" {
		return "", fmt.Errorf("%w: it has no spec.providerID (want qcloud:///<zone>/ins-…)", ErrNoInstanceID)
	}
	return "", fmt.Errorf("%w: its spec.providerID %q is not a Tencent Cloud one (want qcloud:///<zone>/ins-…)", ErrNoInstanceID, node.Spec.ProviderID)
}

// BindingInstance is the instance a binding acts on: the one it recorded
// (status.instanceID) once it has one, else its node's. A node that names
// another instance than the recorded one (deleted and registered again
// under the same name) is refused with ErrInstanceChanged, never followed:
// the binding's address stays where it was bound, and a person decides.
func BindingInstance(recorded string, node *corev1.Node) (string, error) {
	id, err := InstanceID(node)
	switch {
	case err != nil:
		return "", err
	case recorded != "" && id != recorded:
		return "", fmt.Errorf("%w: the binding recorded %s, the node's spec.providerID now names %s; delete the binding to bind the node's new instance",
			ErrInstanceChanged, recorded, id)
	}
	return id, nil
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
