// Package importer converts legacy mumoshu/ingress-daemonset-controller
// manifests (ingressdaemonsets.mumoshu.github.io/v1alpha1 IngressDaemonSet)
// into edgeplane IngressDaemonSets (apps.edgeplane.io/v1alpha1).
//
// It honours every field name the legacy controller or its README used:
// podsPerNode and replicas for replicasPerNode; healthCheckPort and
// healthCheckNodePort for healthCheckNodePorts; maxUnavailablePodsPerNodes
// (the legacy json tag), maxUnavaiablePodsPerNode (the README's spelling,
// silently ignored by the legacy controller) and their other spellings for
// maxUnavailablePodsPerNode. An annotateDeploymentToDetach block without a
// key gets the legacy default key. Where a legacy manifest holds something
// edgeplane rejects or does differently, the converter adjusts it and says
// so in a warning; it never drops a field silently.
package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// LegacyGroup is the legacy API group.
const LegacyGroup = "ingressdaemonsets.mumoshu.github.io"

// LegacyDeploymentDetachKey is the legacy controller's default key for
// annotateDeploymentToDetach (its README's example; note the .com), used when
// a manifest's block sets no key.
const LegacyDeploymentDetachKey = "ingressdaemonsets.mumoshu.github.com/to-be-updated"

// healthCheckPortSpellings are the other names of healthCheckNodePorts: the
// README's prose says healthCheckPort and Spec.HealthCheckNodePort.
var healthCheckPortSpellings = []string{"healthCheckPort", "healthCheckNodePort"}

// maxUnavailableSpellings are the legacy names of maxUnavailablePodsPerNode,
// in order of precedence: the legacy controller's json tag first, since that
// is what it actually honoured.
var maxUnavailableSpellings = []string{
	"maxUnavailablePodsPerNodes",
	"maxUnavailablePodsPerNode",
	"maxUnavaiablePodsPerNode",
	"maxUnavaiablePodsPerNodes",
}

// Convert converts one legacy IngressDaemonSet (decoded YAML or JSON) into an
// edgeplane IngressDaemonSet, with warnings for everything it changed.
func Convert(legacy map[string]any) (*appsv1alpha1.IngressDaemonSet, []string, error) {
	var warn []string
	warnf := func(format string, args ...any) { warn = append(warn, fmt.Sprintf(format, args...)) }

	apiVersion, _ := legacy["apiVersion"].(string)
	kind, _ := legacy["kind"].(string)
	if kind != "IngressDaemonSet" || !strings.HasPrefix(apiVersion, LegacyGroup+"/") {
		return nil, nil, fmt.Errorf("not a legacy IngressDaemonSet: apiVersion %q kind %q", apiVersion, kind)
	}
	out := &appsv1alpha1.IngressDaemonSet{}
	out.APIVersion = appsv1alpha1.GroupVersion.String()
	out.Kind = "IngressDaemonSet"

	meta, _ := legacy["metadata"].(map[string]any)
	out.Name, _ = meta["name"].(string)
	if out.Name == "" {
		return nil, nil, errors.New("metadata.name is missing")
	}
	out.Namespace, _ = meta["namespace"].(string)
	out.Labels = stringMap(meta["labels"])
	if a := stringMap(meta["annotations"]); len(a) > 0 {
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) > 0 {
			out.Annotations = a
		}
	}

	spec, _ := legacy["spec"].(map[string]any)
	if spec == nil {
		return nil, nil, errors.New("spec is missing")
	}
	seen := map[string]bool{}
	take := func(m map[string]any, key string) (any, bool) {
		v, ok := m[key]
		return v, ok
	}

	// replicasPerNode and its legacy names.
	var replicaKeys []string
	for _, k := range []string{"replicasPerNode", "podsPerNode", "replicas"} {
		v, ok := take(spec, k)
		seen[k] = true
		if !ok {
			continue
		}
		n, err := toInt32(v)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.%s: %w", k, err)
		}
		if len(replicaKeys) == 0 {
			out.Spec.ReplicasPerNode = n
		} else if n != out.Spec.ReplicasPerNode {
			warnf("spec.%s (%d) ignored: spec.%s (%d) takes precedence", k, n, replicaKeys[0], out.Spec.ReplicasPerNode)
		}
		replicaKeys = append(replicaKeys, k)
	}
	if len(replicaKeys) == 0 {
		out.Spec.ReplicasPerNode = 1
	} else if replicaKeys[0] != "replicasPerNode" {
		warnf("spec.%s converted to spec.replicasPerNode (%d); the legacy controller ignored it and ran 1 pod per node", replicaKeys[0], out.Spec.ReplicasPerNode)
	}

	// template.
	seen["template"] = true
	tmpl, _ := spec["template"].(map[string]any)
	if tmpl == nil {
		return nil, nil, errors.New("spec.template is missing")
	}
	if err := remarshal(tmpl, &out.Spec.Template); err != nil {
		return nil, nil, fmt.Errorf("spec.template: %w", err)
	}
	if out.Spec.Template.Spec.NodeName != "" {
		warnf("spec.template.spec.nodeName %q removed: edgeplane pins each node's pods itself", out.Spec.Template.Spec.NodeName)
		out.Spec.Template.Spec.NodeName = ""
	}

	if out.Spec.ReplicasPerNode > 1 {
		for _, c := range out.Spec.Template.Spec.Containers {
			for _, port := range c.Ports {
				if port.HostPort != 0 || out.Spec.Template.Spec.HostNetwork {
					warnf("container %s port %d is a host port (hostPort or hostNetwork) and replicasPerNode is %d: the scheduler places only one such pod per node; use SO_REUSEPORT without declaring the port, or a Service with externalTrafficPolicy Local", c.Name, port.ContainerPort, out.Spec.ReplicasPerNode)
				}
			}
		}
	}

	// selector: the legacy controller ignored it; edgeplane requires one.
	seen["selector"] = true
	if sel, ok := spec["selector"]; ok {
		out.Spec.Selector = &metav1.LabelSelector{}
		if err := remarshal(sel, out.Spec.Selector); err != nil {
			return nil, nil, fmt.Errorf("spec.selector: %w", err)
		}
	} else {
		if len(out.Spec.Template.Metadata.Labels) == 0 {
			return nil, nil, errors.New("spec.selector is missing and spec.template.metadata.labels is empty: cannot derive a selector")
		}
		out.Spec.Selector = &metav1.LabelSelector{MatchLabels: maps.Clone(out.Spec.Template.Metadata.Labels)}
		warnf("spec.selector derived from spec.template.metadata.labels (%s)", formatMap(out.Spec.Selector.MatchLabels))
	}

	seen["nodeSelector"] = true
	out.Spec.NodeSelector = stringMap(spec["nodeSelector"])

	// healthCheckNodePorts and the README's other spellings (one port or a
	// list each); every port given under any of them is kept.
	for _, k := range append([]string{"healthCheckNodePorts"}, healthCheckPortSpellings...) {
		seen[k] = true
		v, ok := spec[k]
		if !ok {
			continue
		}
		ports, err := toPorts(v)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.%s: %w", k, err)
		}
		for _, n := range ports {
			if !slices.Contains(out.Spec.HealthCheckNodePorts, n) {
				out.Spec.HealthCheckNodePorts = append(out.Spec.HealthCheckNodePorts, n)
			}
		}
		if k != "healthCheckNodePorts" {
			warnf("spec.%s converted to spec.healthCheckNodePorts", k)
		}
	}

	seen["healthChecker"] = true
	if hc, ok := spec["healthChecker"].(map[string]any); ok {
		// The health checker is the platform's: its image, pull policy,
		// ServiceAccount and resources are the manager's flags, and
		// admission refuses them in the spec.
		for _, k := range []string{"image", "imagePullPolicy", "serviceAccountName", "resources"} {
			if v, ok := hc[k]; ok && v != nil && v != "" {
				warnf("spec.healthChecker.%s %v dropped: the health checker's image, pull policy, ServiceAccount and resources are the platform's (the manager's --ingressdaemonset-healthcheck-* flags)", k, v)
			}
		}
	}

	seen["updateStrategy"] = true
	if us, ok := spec["updateStrategy"].(map[string]any); ok {
		if t, _ := us["type"].(string); t != "" && t != string(appsv1alpha1.RollingUpdateStrategyType) {
			warnf("spec.updateStrategy.type %q replaced by RollingUpdate, the only strategy", t)
		}
		out.Spec.UpdateStrategy.Type = appsv1alpha1.RollingUpdateStrategyType
		if ru, ok := us["rollingUpdate"].(map[string]any); ok {
			r, w, err := convertRollingUpdate(ru)
			if err != nil {
				return nil, nil, fmt.Errorf("spec.updateStrategy.rollingUpdate: %w", err)
			}
			warn = append(warn, w...)
			out.Spec.UpdateStrategy.RollingUpdate = r
		}
	}

	var unknown []string
	for k := range spec {
		if !seen[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		warnf("spec.%s is unknown and was dropped", k)
	}
	return out, warn, nil
}

func convertRollingUpdate(ru map[string]any) (*appsv1alpha1.RollingUpdate, []string, error) {
	var warn []string
	warnf := func(format string, args ...any) { warn = append(warn, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	out := &appsv1alpha1.RollingUpdate{}
	optInt := func(key string) (*int32, error) {
		seen[key] = true
		v, ok := ru[key]
		if !ok || v == nil {
			return nil, nil
		}
		n, err := toInt32(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return &n, nil
	}
	var err error
	if out.MaxUnavailableNodes, err = optInt("maxUnavailableNodes"); err != nil {
		return nil, nil, err
	}
	if out.MaxDegradedNodes, err = optInt("maxDegradedNodes"); err != nil {
		return nil, nil, err
	}
	if out.Partition, err = optInt("partition"); err != nil {
		return nil, nil, err
	}
	seen["paused"] = true
	if p, ok := ru["paused"].(bool); ok {
		out.Paused = p
	}
	detach := out.MaxUnavailableNodes != nil && *out.MaxUnavailableNodes >= 1
	if detach && out.MaxDegradedNodes != nil && *out.MaxDegradedNodes != 0 {
		warnf("maxDegradedNodes %d dropped: with maxUnavailableNodes >= 1 it must be 0 (as the legacy README says)", *out.MaxDegradedNodes)
		out.MaxDegradedNodes = nil
	}
	if !detach && out.MaxDegradedNodes != nil && *out.MaxDegradedNodes != 1 {
		warnf("maxDegradedNodes %d is honoured now; the legacy controller always used 1", *out.MaxDegradedNodes)
	}

	var from string
	for _, k := range maxUnavailableSpellings {
		seen[k] = true
		v, ok := ru[k]
		if !ok {
			continue
		}
		ios, err := toIntOrString(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k, err)
		}
		if from == "" {
			out.MaxUnavailablePodsPerNode = &ios
			from = k
			if k == "maxUnavaiablePodsPerNode" || k == "maxUnavaiablePodsPerNodes" {
				warnf("%s (misspelt; the legacy controller ignored it) converted to maxUnavailablePodsPerNode", k)
			} else if k != "maxUnavailablePodsPerNode" {
				warnf("%s converted to maxUnavailablePodsPerNode", k)
			}
			continue
		}
		if ios != *out.MaxUnavailablePodsPerNode {
			warnf("%s (%s) ignored: %s (%s) takes precedence", k, ios.String(), from, out.MaxUnavailablePodsPerNode.String())
		}
	}
	seen["maxSurgedPodsPerNode"] = true
	if v, ok := ru["maxSurgedPodsPerNode"]; ok {
		ios, err := toIntOrString(v)
		if err != nil {
			return nil, nil, fmt.Errorf("maxSurgedPodsPerNode: %w", err)
		}
		out.MaxSurgedPodsPerNode = &ios
	}

	// annotation converts a detach annotation block; defaultKey is the key the
	// legacy controller used when the block named none ("": it had none).
	annotation := func(key, defaultKey string) (*appsv1alpha1.DetachAnnotation, error) {
		seen[key] = true
		m, ok := ru[key].(map[string]any)
		if !ok {
			return nil, nil
		}
		a := &appsv1alpha1.DetachAnnotation{}
		a.Key, _ = m["key"].(string)
		if a.Key == "" && defaultKey != "" {
			a.Key = defaultKey
			warnf("%s.key is missing: the legacy default %s is used", key, defaultKey)
		}
		if a.Key == "" {
			return nil, fmt.Errorf("%s.key is missing", key)
		}
		a.Value, _ = m["value"].(string)
		if g, ok := m["gracePeriodSeconds"]; ok {
			n, err := toInt32(g)
			if err != nil {
				return nil, fmt.Errorf("%s.gracePeriodSeconds: %w", key, err)
			}
			a.GracePeriodSeconds = n
		}
		return a, nil
	}
	if out.AnnotateDeploymentToDetach, err = annotation("annotateDeploymentToDetach", LegacyDeploymentDetachKey); err != nil {
		return nil, nil, err
	}
	// The legacy controller had no default node key (it wrote an empty one).
	if out.AnnotateNodeToDetach, err = annotation("annotateNodeToDetach", ""); err != nil {
		return nil, nil, err
	}
	if out.AnnotateNodeToDetach != nil && !detach {
		warnf("annotateNodeToDetach dropped: it needs maxUnavailableNodes >= 1 (the legacy controller only used it then)")
		out.AnnotateNodeToDetach = nil
	}
	seen["waitForDetachmentByAnnotatedTimestamp"] = true
	if m, ok := ru["waitForDetachmentByAnnotatedTimestamp"].(map[string]any); ok {
		w := &appsv1alpha1.DetachmentTimestamp{Format: appsv1alpha1.TimestampFormatRFC3339, GracePeriodSeconds: 10}
		w.Key, _ = m["key"].(string)
		if w.Key == "" {
			return nil, nil, errors.New("waitForDetachmentByAnnotatedTimestamp.key is missing")
		}
		if f, _ := m["format"].(string); f != "" && f != string(appsv1alpha1.TimestampFormatRFC3339) {
			return nil, nil, fmt.Errorf("waitForDetachmentByAnnotatedTimestamp.format %q: only RFC3339 is supported", f)
		}
		if g, ok := m["gracePeriodSeconds"]; ok {
			n, err := toInt32(g)
			if err != nil {
				return nil, nil, fmt.Errorf("waitForDetachmentByAnnotatedTimestamp.gracePeriodSeconds: %w", err)
			}
			w.GracePeriodSeconds = n
		}
		if out.AnnotateNodeToDetach == nil {
			warnf("waitForDetachmentByAnnotatedTimestamp dropped: it needs annotateNodeToDetach")
		} else {
			out.WaitForDetachmentByAnnotatedTimestamp = w
			warnf("waitForDetachmentByAnnotatedTimestamp now reads the node's annotation %s (the legacy controller read the Deployment's)", w.Key)
		}
	}
	var unknown []string
	for k := range ru {
		if !seen[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		warnf("spec.updateStrategy.rollingUpdate.%s is unknown and was dropped", k)
	}
	return out, warn, nil
}

// Marshal renders ids as YAML without empty status or creationTimestamp.
func Marshal(ids *appsv1alpha1.IngressDaemonSet) ([]byte, error) {
	j, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ids.Name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ids.Name, err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ids.Name, err)
	}
	return b, nil
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	return nil
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		out[k] = fmt.Sprint(val)
	}
	return out
}

func formatMap(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func toInt32(v any) (int32, error) {
	switch n := v.(type) {
	case float64:
		if n != float64(int32(n)) {
			return 0, fmt.Errorf("%v is not a 32-bit integer", n)
		}
		return int32(n), nil
	case int64:
		if n != int64(int32(n)) {
			return 0, fmt.Errorf("%v is not a 32-bit integer", n)
		}
		return int32(n), nil
	case int:
		if n != int(int32(n)) {
			return 0, fmt.Errorf("%v is not a 32-bit integer", n)
		}
		return int32(n), nil
	case json.Number:
		i, err := n.Int64()
		if err != nil || i != int64(int32(i)) {
			return 0, fmt.Errorf("%v is not a 32-bit integer", n)
		}
		return int32(i), nil
	default:
		return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
	}
}

// toPorts reads one port or a list of ports.
func toPorts(v any) ([]int32, error) {
	list, ok := v.([]any)
	if !ok {
		n, err := toInt32(v)
		if err != nil {
			return nil, err
		}
		return []int32{n}, nil
	}
	out := make([]int32, 0, len(list))
	for i, p := range list {
		n, err := toInt32(p)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func toIntOrString(v any) (intstr.IntOrString, error) {
	if s, ok := v.(string); ok {
		if s == "" {
			return intstr.IntOrString{}, errors.New("empty value")
		}
		return intstr.FromString(s), nil
	}
	n, err := toInt32(v)
	if err != nil {
		return intstr.IntOrString{}, err
	}
	return intstr.FromInt32(n), nil
}
