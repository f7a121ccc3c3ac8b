package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestRewritesEveryWebhookToTheURL(t *testing.T) {
	in, err := os.ReadFile("../../config/webhook/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(bytes.NewReader(in), &out, "https://127.0.0.1:29443", "edgeplane-"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n, want := strings.Count(got, "url: https://127.0.0.1:29443/"), strings.Count(string(in), "path: /"); n != want || n == 0 {
		t.Errorf("%d webhooks call the URL, want %d:\n%s", n, want, got)
	}
	for _, name := range []string{"name: edgeplane-mutating-webhook-configuration", "name: edgeplane-validating-webhook-configuration"} {
		if !strings.Contains(got, name) {
			t.Errorf("output lacks %q", name)
		}
	}
	// The scope the generated configurations carry reaches the demo cluster.
	for _, scope := range []string{"namespaceSelector:", "- edgeplane-system", "objectSelector:", "timeoutSeconds: 3"} {
		if !strings.Contains(got, scope) {
			t.Errorf("output lacks %q:\n%s", scope, got)
		}
	}
	if strings.Contains(got, "timeoutSeconds: 5") {
		t.Errorf("a webhook keeps a 5 s timeout:\n%s", got)
	}
	if strings.Contains(got, "service:") {
		t.Errorf("a webhook still calls a Service:\n%s", got)
	}
	if err := run(bytes.NewReader(in), &out, "http://127.0.0.1:1", "x-"); err == nil {
		t.Error("a plain http URL was accepted")
	}
}

func TestPassesPoliciesAndLeavesOutTheRest(t *testing.T) {
	policies, err := os.ReadFile("../../config/components/node-taint-policies/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := append([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n---\n"), policies...)
	var out bytes.Buffer
	if err := run(bytes.NewReader(in), &out, "https://127.0.0.1:29443", "edgeplane-"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "Deployment") {
		t.Errorf("a Deployment came through:\n%s", got)
	}
	for _, want := range []string{
		"kind: MutatingAdmissionPolicy\n", "kind: MutatingAdmissionPolicyBinding\n",
		"name: edgeplane-anycastipbinding-node-taint", "policyName: edgeplane-anycastipbinding-node-taint",
		"policyName: edgeplane-nodeelasticip-node-taint",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
