// Command demowebhooks picks the admission configuration out of manifests on
// stdin (`kustomize build config/default` in `make demo`) for a manager that
// runs outside the cluster: each webhook configuration gets the name prefix
// and each webhook calls --url plus its path instead of the in-cluster
// Service (the manager's self-managed certificate covers that address and it
// injects the caBundle, as it does in a cluster); MutatingAdmissionPolicies
// and their bindings (the node taints) pass through with the prefix; every
// other object is left out.
//
//	go tool kustomize build config/default | go run ./hack/demowebhooks --url https://127.0.0.1:29443 --prefix "" | kubectl apply -f -
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	url := flag.String("url", "", "the manager's webhook server, e.g. https://127.0.0.1:29443 (required)")
	prefix := flag.String("prefix", "edgeplane-", "prefix of the configurations' names (the manager's --*-webhook-configuration flags)")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, strings.TrimSuffix(*url, "/"), *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "demowebhooks:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, url, prefix string) error {
	if !strings.HasPrefix(url, "https://") {
		return fmt.Errorf("--url must be an https:// address, not %q", url)
	}
	dec := utilyaml.NewYAMLReader(bufio.NewReader(in))
	w := bufio.NewWriter(out)
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		switch u.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		case "MutatingAdmissionPolicyBinding":
			if err := unstructured.SetNestedField(u.Object, prefix+policyName(u), "spec", "policyName"); err != nil {
				return err
			}
			fallthrough
		case "MutatingAdmissionPolicy":
			u.SetName(prefix + u.GetName())
			if err := write(w, u); err != nil {
				return err
			}
			continue
		default:
			continue
		}
		u.SetName(prefix + u.GetName())
		hooks, _, err := unstructured.NestedSlice(u.Object, "webhooks")
		if err != nil {
			return fmt.Errorf("%s: webhooks: %w", u.GetName(), err)
		}
		for i, h := range hooks {
			hook := h.(map[string]any)
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			if path == "" {
				return fmt.Errorf("%s: webhook %d has no clientConfig.service.path", u.GetName(), i)
			}
			hook["clientConfig"] = map[string]any{"url": url + path}
		}
		if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
			return err
		}
		if err := write(w, u); err != nil {
			return err
		}
	}
	return w.Flush()
}

func policyName(u *unstructured.Unstructured) string {
	name, _, _ := unstructured.NestedString(u.Object, "spec", "policyName")
	return name
}

func write(w io.Writer, u *unstructured.Unstructured) error {
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", b)
	return err
}
