// Command convert turns legacy mumoshu/ingress-daemonset-controller
// IngressDaemonSet manifests into edgeplane IngressDaemonSets:
//
//	go run ./internal/controller/ingressdaemonset/importer/convert < legacy.yaml > edgeplane.yaml
//	kubectl get ingressdaemonsets.ingressdaemonsets.mumoshu.github.io -A -o yaml | go run ./internal/controller/ingressdaemonset/importer/convert
//
// Warnings (every field it changed or dropped, and why) go to stderr.
package main

import (
	"fmt"
	"os"

	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/importer"
)

func main() {
	warnings, err := importer.ConvertYAML(os.Stdin, os.Stdout)
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
