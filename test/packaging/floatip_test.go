package packaging_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/edgeplane/edgeplane/internal/plugin/manifest"
)

// rendered is what the float-IP and NetworkPolicy checks read of a render.
type rendered struct {
	manager   *corev1.Container
	schedCfg  string // the scheduler configuration's YAML, "" when none
	policy    *networkingv1.NetworkPolicy
	certs     []*unstructured.Unstructured // cert-manager Certificates
	services  map[string]*corev1.Service
	namespace string
}

func readRender(t *testing.T, manifests []byte) rendered {
	t.Helper()
	objs, err := manifest.Read("helm template", bytes.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	r := rendered{services: map[string]*corev1.Service{}}
	for _, o := range objs {
		u := o.Object
		switch u.GetKind() {
		case "Deployment":
			dep := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
				t.Fatal(err)
			}
			for i := range dep.Spec.Template.Spec.Containers {
				if c := &dep.Spec.Template.Spec.Containers[i]; c.Name == "manager" {
					r.manager, r.namespace = c, dep.Namespace
				}
			}
		case "ConfigMap":
			if cfg, ok, _ := unstructured.NestedString(u.Object, "data", "kube-scheduler-config.yaml"); ok {
				r.schedCfg = cfg
			}
		case "NetworkPolicy":
			r.policy = &networkingv1.NetworkPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r.policy); err != nil {
				t.Fatal(err)
			}
		case "Certificate":
			r.certs = append(r.certs, u)
		case "Service":
			svc := &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, svc); err != nil {
				t.Fatal(err)
			}
			r.services[svc.Name] = svc
		}
	}
	if r.manager == nil {
		t.Fatal("no manager container rendered")
	}
	return r
}

// arg is the value of the manager's --name=value argument, "" if absent.
func (r rendered) arg(name string) (string, bool) {
	for _, a := range r.manager.Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// checkFloatIPServers: the scheduler configuration calls the extender over
// TLS with the client certificate of the Secret the manager or cert-manager
// keeps, verifying the extender by a name its serving certificate covers;
// the galaxy API is served only when enabled.
func checkFloatIPServers(t *testing.T, manifests []byte) {
	t.Helper()
	r := readRender(t, manifests)
	svcName := ""
	for name, svc := range r.services {
		if svc.Labels["app.kubernetes.io/component"] == "floatip" {
			svcName = name
		}
	}
	if svcName == "" {
		t.Fatal("no float-IP Service rendered")
	}
	serverName := svcName + "." + r.namespace + ".svc"

	// Who makes the serving certificate, and for which name.
	mode, _ := r.arg("floatippool-certs")
	switch mode {
	case "self-managed":
		if v, _ := r.arg("floatippool-service-name"); v != svcName {
			t.Errorf("self-managed certificates for Service %q, the Service is %q", v, svcName)
		}
		if v, _ := r.arg("floatippool-scheduler-client-secret-name"); v != svcName+"-scheduler-client" {
			t.Errorf("the scheduler's client Secret is %q, want %q", v, svcName+"-scheduler-client")
		}
	case "provided":
		var dnsNames []string
		client := false
		for _, c := range r.certs {
			secret, _, _ := unstructured.NestedString(c.Object, "spec", "secretName")
			usages, _, _ := unstructured.NestedStringSlice(c.Object, "spec", "usages")
			switch secret {
			case svcName + "-server-cert":
				dnsNames, _, _ = unstructured.NestedStringSlice(c.Object, "spec", "dnsNames")
			case svcName + "-scheduler-client":
				client = strings.Contains(strings.Join(usages, ","), "client auth")
			}
		}
		if !strings.Contains(strings.Join(dnsNames, ","), serverName) {
			t.Errorf("the extender's Certificate covers %v, not %s", dnsNames, serverName)
		}
		if !client {
			t.Errorf("no client-auth Certificate for the Secret %s-scheduler-client", svcName)
		}
		mounted := false
		for _, m := range r.manager.VolumeMounts {
			dir, _ := r.arg("floatippool-cert-dir")
			mounted = mounted || m.MountPath == dir
		}
		if !mounted {
			t.Errorf("provided certificates, but nothing is mounted at --floatippool-cert-dir")
		}
	default:
		t.Errorf("--floatippool-certs=%q", mode)
	}

	if r.schedCfg != "" {
		var cfg struct {
			Extenders []struct {
				URLPrefix   string `json:"urlPrefix"`
				EnableHTTPS bool   `json:"enableHTTPS"`
				TLSConfig   struct {
					CertFile, KeyFile, CAFile, ServerName string
					Insecure                              bool
				} `json:"tlsConfig"`
				NodeCacheCapable bool `json:"nodeCacheCapable"`
			} `json:"extenders"`
		}
		if err := yaml.Unmarshal([]byte(r.schedCfg), &cfg); err != nil || len(cfg.Extenders) != 1 {
			t.Fatalf("scheduler configuration: %v\n%s", err, r.schedCfg)
		}
		e := cfg.Extenders[0]
		tc := e.TLSConfig
		if !strings.HasPrefix(e.URLPrefix, "https://") || !e.EnableHTTPS || tc.Insecure || tc.ServerName != serverName ||
			!strings.HasSuffix(tc.CertFile, "/tls.crt") || !strings.HasSuffix(tc.KeyFile, "/tls.key") || !strings.HasSuffix(tc.CAFile, "/ca.crt") {
			t.Errorf("the scheduler calls the extender as %+v", e)
		}
		if !e.NodeCacheCapable {
			t.Error("the scheduler sends whole nodes (nodeCacheCapable false): the bodies outgrow the extender's cap")
		}
	}

	api, on := r.arg("floatippool-api-address")
	ports := map[string]bool{}
	for _, p := range r.manager.Ports {
		ports[p.Name] = true
	}
	if on != ports["floatip-api"] || on != (len(r.services[svcName].Spec.Ports) == 2) {
		t.Errorf("galaxy API address %q (on %v), container port %v, Service ports %v", api, on, ports["floatip-api"], r.services[svcName].Spec.Ports)
	}
}

// checkNetworkPolicy: when enabled, the NetworkPolicy selects the manager's
// pods and admits, on every port the manager container exposes but its
// health probes', exactly the peers the values name, and nothing on any
// other port; the health port has no rule (the kubelet probes from the
// node).
func checkNetworkPolicy(t *testing.T, manifests []byte, enabled bool) {
	t.Helper()
	r := readRender(t, manifests)
	if (r.policy != nil) != enabled {
		t.Fatalf("NetworkPolicy rendered: %v, want %v", r.policy != nil, enabled)
	}
	if !enabled {
		return
	}
	p := r.policy
	if len(p.Spec.PolicyTypes) != 1 || p.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("policy types %v, want [Ingress]", p.Spec.PolicyTypes)
	}
	if p.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] != "manager" {
		t.Errorf("the NetworkPolicy selects %v, not the manager's pods", p.Spec.PodSelector)
	}
	admitted := map[int32]bool{}
	for _, rule := range p.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("a rule admits any source on %v", rule.Ports)
		}
		for _, port := range rule.Ports {
			admitted[int32(port.Port.IntValue())] = true //nolint:gosec // a port number
		}
	}
	for _, port := range r.manager.Ports {
		if port.Name == "health" {
			if admitted[port.ContainerPort] {
				t.Errorf("the health port %d has a rule; only its node's kubelet needs it", port.ContainerPort)
			}
			continue
		}
		if !admitted[port.ContainerPort] {
			t.Errorf("the manager's port %s (%d) has no rule: its callers cannot reach it", port.Name, port.ContainerPort)
		}
		delete(admitted, port.ContainerPort)
	}
	for port := range admitted {
		t.Errorf("the NetworkPolicy admits port %s, which the manager does not expose", strconv.Itoa(int(port)))
	}
}
