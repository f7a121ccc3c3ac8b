package ingressdaemonset

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
)

// DefaultHealthCheckImage is the health checker's image when the manager
// names none.
const DefaultHealthCheckImage = "ghcr.io/edgeplane/edgeplane:latest"

// HealthCheckBinary is the health checker's path in the edgeplane image.
const HealthCheckBinary = "/edgeplane-healthcheck"

// DefaultHealthCheckNamespace and DefaultHealthCheckServiceAccount are
// where, and as whom, health checkers run when the manager names nothing:
// config/'s namespace and the ServiceAccount config/rbac binds to the
// health checker's read-only ClusterRole.
const (
	DefaultHealthCheckNamespace      = "edgeplane-system"
	DefaultHealthCheckServiceAccount = "edgeplane-ingressdaemonset-healthcheck"
)

// HostIP as the bind address makes the health checker listen on the node's
// primary address (the pod's status.hostIP), the one a load balancer checks.
const HostIP = "host-ip"

// HealthChecker is the health checker as the platform runs it. Nothing of
// it comes from an IngressDaemonSet but the ports, the node selection and
// those of the template's tolerations AllowedTolerations covers: whoever may
// write an IngressDaemonSet must not choose what runs on the host network of
// every node, nor as whom.
type HealthChecker struct {
	// Image holds HealthCheckBinary.
	Image string
	// ImagePullPolicy of the container (empty: IfNotPresent).
	ImagePullPolicy corev1.PullPolicy
	// Namespace the DaemonSets live in: the platform's own. It must admit
	// host-network pods (Pod Security "privileged").
	Namespace string
	// ServiceAccount the health checkers run as, in Namespace; the platform
	// binds it to read Deployments (the chart, config/rbac).
	ServiceAccount string
	// Resources of the container (zero: DefaultHealthCheckResources).
	Resources corev1.ResourceRequirements
	// AllowedTolerations are the tolerations a template's toleration must be
	// covered by to reach the health checker (none: it tolerates no taint),
	// so an IngressDaemonSet cannot widen where a host-network pod of the
	// platform's lands.
	AllowedTolerations []corev1.Toleration
	// BindAddress is the IP address the health checker listens on: HostIP
	// (the default), or a literal address ("0.0.0.0": every address).
	BindAddress string
}

// DefaultHealthChecker is the health checker of config/'s install.
func DefaultHealthChecker() HealthChecker {
	return HealthChecker{
		Image:           DefaultHealthCheckImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Namespace:       DefaultHealthCheckNamespace,
		ServiceAccount:  DefaultHealthCheckServiceAccount,
		Resources:       DefaultHealthCheckResources(),
		BindAddress:     HostIP,
	}
}

// withDefaults fills what hc leaves empty from DefaultHealthChecker.
func (hc HealthChecker) withDefaults() HealthChecker {
	d := DefaultHealthChecker()
	if hc.Image == "" {
		hc.Image = d.Image
	}
	if hc.ImagePullPolicy == "" {
		hc.ImagePullPolicy = d.ImagePullPolicy
	}
	if hc.Namespace == "" {
		hc.Namespace = d.Namespace
	}
	if hc.ServiceAccount == "" {
		hc.ServiceAccount = d.ServiceAccount
	}
	if len(hc.Resources.Requests) == 0 && len(hc.Resources.Limits) == 0 {
		hc.Resources = d.Resources
	}
	if hc.BindAddress == "" {
		hc.BindAddress = d.BindAddress
	}
	return hc
}

// DefaultHealthCheckResources are the health checker's resources when the
// manager names none (the legacy controller wrote memory as "100m", 0.1 bytes).
func DefaultHealthCheckResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
}

// BindFlags registers hc's flags on fs, each checked as it is parsed.
func (hc *HealthChecker) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&hc.Image, "ingressdaemonset-healthcheck-image", hc.Image,
		"Image holding "+HealthCheckBinary+", run by every IngressDaemonSet's health-checker DaemonSets.")
	fs.Func("ingressdaemonset-healthcheck-image-pull-policy", "Pull policy of the health checker's image: Always, IfNotPresent or Never (default IfNotPresent).",
		func(v string) error {
			switch p := corev1.PullPolicy(v); p {
			case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
				hc.ImagePullPolicy = p
				return nil
			}
			return fmt.Errorf("%q is not Always, IfNotPresent or Never", v)
		})
	fs.Func("ingressdaemonset-healthcheck-namespace", "Namespace of the health-checker DaemonSets: the platform's own, admitting host-network pods (default "+DefaultHealthCheckNamespace+").",
		func(v string) error {
			if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
				return fmt.Errorf("%q is not a namespace name: %v", v, errs)
			}
			hc.Namespace = v
			return nil
		})
	fs.Func("ingressdaemonset-healthcheck-service-account", "ServiceAccount, in that namespace, the health checkers run as; the platform binds it to read Deployments (default "+DefaultHealthCheckServiceAccount+").",
		func(v string) error {
			if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
				return fmt.Errorf("%q is not a ServiceAccount name: %v", v, errs)
			}
			hc.ServiceAccount = v
			return nil
		})
	fs.Func("ingressdaemonset-healthcheck-resources", `Resources of the health checker's container, as JSON, e.g. {"requests":{"cpu":"10m","memory":"32Mi"},"limits":{"memory":"64Mi"}} (the default).`,
		func(v string) error {
			var r corev1.ResourceRequirements
			if err := decodeStrict(v, &r); err != nil {
				return err
			}
			hc.Resources = r
			return nil
		})
	fs.Func("ingressdaemonset-healthcheck-allowed-tolerations", `Tolerations, as a JSON list, that an IngressDaemonSet template's toleration must be covered by to be given to its health checker, e.g. [{"key":"dedicated","operator":"Equal","value":"ingress","effect":"NoSchedule"}]. Default none: the health checker tolerates no taint.`,
		func(v string) error {
			var ts []corev1.Toleration
			if err := decodeStrict(v, &ts); err != nil {
				return err
			}
			for i, t := range ts {
				if err := validToleration(t); err != nil {
					return fmt.Errorf("toleration %d: %w", i, err)
				}
			}
			hc.AllowedTolerations = ts
			return nil
		})
	fs.Func("ingressdaemonset-healthcheck-bind-address", `Address the health checker listens on: "`+HostIP+`" (the node's primary address, status.hostIP: the default) or an IP address ("0.0.0.0" for every address of the node).`,
		func(v string) error {
			if v != HostIP && net.ParseIP(v) == nil {
				return fmt.Errorf("%q is neither %q nor an IP address", v, HostIP)
			}
			hc.BindAddress = v
			return nil
		})
}

func decodeStrict(v string, into any) error {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("decoding %q: %w", v, err)
	}
	return nil
}

// validToleration refuses what the API server would refuse in a pod.
func validToleration(t corev1.Toleration) error {
	switch t.Operator {
	case corev1.TolerationOpExists:
		if t.Value != "" {
			return fmt.Errorf("operator Exists with value %q", t.Value)
		}
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			return fmt.Errorf("operator Equal needs a key")
		}
	default:
		return fmt.Errorf("operator %q is not Exists or Equal", t.Operator)
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return fmt.Errorf("effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t.Effect)
	}
	return nil
}

// tolerationCovers reports whether every taint t tolerates, allowed
// tolerates too: the same key (or allowed has none and operator Exists:
// every key), the same effect (or allowed has none: every effect), and
// allowed's operator Exists or both Equal on the same value. A toleration
// with an operator this does not know is covered only by one tolerating
// every value of its key.
func tolerationCovers(allowed, t corev1.Toleration) bool {
	op := func(x corev1.Toleration) corev1.TolerationOperator {
		if x.Operator == "" {
			return corev1.TolerationOpEqual
		}
		return x.Operator
	}
	if allowed.Effect != "" && allowed.Effect != t.Effect {
		return false
	}
	if allowed.Key == "" {
		return op(allowed) == corev1.TolerationOpExists
	}
	if allowed.Key != t.Key {
		return false
	}
	switch op(allowed) {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual:
		return op(t) == corev1.TolerationOpEqual && allowed.Value == t.Value
	}
	return false
}

// allowTolerations splits the template's tolerations into those some
// allowed toleration covers (kept, for the health checker) and the rest.
func allowTolerations(template, allowed []corev1.Toleration) (kept, dropped []corev1.Toleration) {
	for _, t := range template {
		if slices.ContainsFunc(allowed, func(a corev1.Toleration) bool { return tolerationCovers(a, t) }) {
			kept = append(kept, t)
		} else {
			dropped = append(dropped, t)
		}
	}
	return kept, dropped
}

// ignoredFields lists the deprecated spec.healthChecker fields hc sets: an
// object stored before admission refused them still has them.
func ignoredFields(hc appsv1alpha1.HealthChecker) []string {
	var out []string
	if hc.Image != "" {
		out = append(out, "image")
	}
	if hc.ImagePullPolicy != "" {
		out = append(out, "imagePullPolicy")
	}
	if hc.ServiceAccountName != "" {
		out = append(out, "serviceAccountName")
	}
	if hc.Resources != nil {
		out = append(out, "resources")
	}
	return out
}

// checkerLabels are the labels of ids's health-checker DaemonSet for port
// (and its selector's, but the UID, which a selector need not carry).
func checkerLabels(ids *appsv1alpha1.IngressDaemonSet, port int32) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelIngressDaemonSet:          naming.LabelValue(ids.Name),
		appsv1alpha1.LabelIngressDaemonSetNamespace: ids.Namespace,
		appsv1alpha1.LabelHealthCheckPort:           strconv.Itoa(int(port)),
	}
}

// checkersOf selects the health-checker DaemonSets of the IngressDaemonSet
// namespace/name, whatever its UID and port.
func checkersOf(namespace, name string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		appsv1alpha1.LabelIngressDaemonSet:          naming.LabelValue(name),
		appsv1alpha1.LabelIngressDaemonSetNamespace: namespace,
	})
}

// checkerOwner returns the IngressDaemonSet (namespace/name) a DaemonSet in
// the platform's namespace is the health checker of, "" if none.
func checkerOwner(ds *appsv1.DaemonSet) string {
	return ds.Annotations[appsv1alpha1.AnnotationIngressDaemonSet]
}

func ownerKey(ids *appsv1alpha1.IngressDaemonSet) string { return ids.Namespace + "/" + ids.Name }

// isCheckerOf reports whether ds is the health checker of ids itself: its
// annotation names ids and its UID label is ids's (not an earlier object's
// of the same name).
func isCheckerOf(ds *appsv1.DaemonSet, ids *appsv1alpha1.IngressDaemonSet) bool {
	return checkerOwner(ds) == ownerKey(ids) && ds.Labels[appsv1alpha1.LabelIngressDaemonSetUID] == string(ids.UID)
}

// healthDaemonSet builds ids's health-checker DaemonSet for port as the
// platform runs it (hc, with defaults), and returns the template's
// tolerations hc does not allow, which it leaves out. The health checker
// serves /ok, /healthz, /livez and /metrics on that one port, so two
// health DaemonSets on a node never collide.
func healthDaemonSet(ids *appsv1alpha1.IngressDaemonSet, port int32, hc HealthChecker) (*appsv1.DaemonSet, []corev1.Toleration) {
	hc = hc.withDefaults()
	nodeSelector := maps.Clone(ids.Spec.NodeSelector)
	if len(ids.Spec.Template.Spec.NodeSelector) > 0 {
		if nodeSelector == nil {
			nodeSelector = map[string]string{}
		}
		maps.Copy(nodeSelector, ids.Spec.Template.Spec.NodeSelector)
	}
	tolerations, dropped := allowTolerations(ids.Spec.Template.Spec.Tolerations, hc.AllowedTolerations)
	sel := checkerLabels(ids, port)
	l := maps.Clone(sel)
	l[appsv1alpha1.LabelIngressDaemonSetUID] = string(ids.UID)
	env := []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"},
	}}}
	bind := hc.BindAddress
	if bind == HostIP {
		env = append(env, corev1.EnvVar{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"},
		}})
		bind = "$(HOST_IP)"
	}
	probe := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/livez", Port: intstr.FromInt32(port)}},
		PeriodSeconds: 10,
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:        naming.HealthCheckerName(ids.Namespace, ids.Name, port),
			Namespace:   hc.Namespace,
			Labels:      l,
			Annotations: map[string]string{appsv1alpha1.AnnotationIngressDaemonSet: ownerKey(ids)},
		},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					HostNetwork:        true,
					DNSPolicy:          corev1.DNSClusterFirstWithHostNet,
					ServiceAccountName: hc.ServiceAccount,
					NodeSelector:       nodeSelector,
					Tolerations:        tolerations,
					SecurityContext:    &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name:            "healthcheck",
						Image:           hc.Image,
						ImagePullPolicy: hc.ImagePullPolicy,
						Command:         []string{HealthCheckBinary},
						Args: []string{
							"--bind-address=" + bind,
							"--port=" + strconv.Itoa(int(port)),
							"--namespace=" + ids.Namespace,
							"--ingress-daemonset=" + ids.Name,
							"--node=$(NODE_NAME)",
						},
						Env:            env,
						Ports:          []corev1.ContainerPort{{Name: "health", ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP}},
						Resources:      *hc.Resources.DeepCopy(),
						LivenessProbe:  probe,
						ReadinessProbe: probe,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	return ds, dropped
}
