# edgeplane — build, generate, test and demo.
# Everything it needs is built from Go modules (see hack/tools/go.mod and hack/k8s/).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO          ?= go
TOOLS       := $(GO) tool -modfile=hack/tools/go.mod
# Build tags of every edgeplane binary, one source for the Makefile, the image
# script and the tests' builds (hack/go-build-tags says why).
GO_BUILD_TAGS := $(shell grep -v '^\#' hack/go-build-tags | paste -sd, -)
K8S_VERSION := v1.37.0
K8S_BIN     := bin/k8s/$(K8S_VERSION)
DEMO_DIR    ?= .demo
BENCH_COUNT ?= 3
GO_TEST_FLAGS ?=
# Integration tests run a kube-apiserver and etcd per package; two at a time fit 2 cores.
GO_TEST_P   ?= 2
FUZZ_TIME   ?= 10s

CNI_PLUGINS_VERSION := $(shell awk '$$1 == "github.com/containernetworking/plugins" || ($$1 == "require" && $$2 == "github.com/containernetworking/plugins") {print $$NF; exit}' hack/cni/go.mod)
CNI_BIN     := bin/cni/$(CNI_PLUGINS_VERSION)
PROMETHEUS_VERSION := $(shell awk '$$1 == "github.com/prometheus/prometheus" || ($$1 == "require" && $$2 == "github.com/prometheus/prometheus") {print $$NF; exit}' hack/prometheus/go.mod)
PROMETHEUS_BIN := bin/prometheus/$(PROMETHEUS_VERSION)

export EDGEPLANE_K8S_BIN_DIR := $(CURDIR)/$(K8S_BIN)
export EDGEPLANE_CNI_BIN_DIR := $(CURDIR)/$(CNI_BIN)
export EDGEPLANE_PROMETHEUS_BIN_DIR := $(CURDIR)/$(PROMETHEUS_BIN)

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: ## Generate deepcopy functions and the typed clients under apis/client.
	hack/update-codegen.sh

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook configurations into config/, and copy the CRDs into the chart.
	hack/update-manifests.sh

.PHONY: fmt
fmt: ## gofmt the code.
	gofmt -w $$(git ls-files -co --exclude-standard '*.go')

.PHONY: vet
vet: ## go vet the code.
	$(GO) vet ./...

.PHONY: lint
lint: ## Run golangci-lint.
	$(TOOLS) golangci-lint run --allow-parallel-runners ./...

.PHONY: verify
verify: ## Fail if generated files are stale, code is not gofmt'ed, or vet/lint/tidy complain.
	hack/verify.sh

##@ Build

.PHONY: build
build: ## Build the edgeplane binaries into bin/.
	$(GO) build -tags '$(GO_BUILD_TAGS)' -o bin/ ./cmd/...

# Container images are built without a container daemon (internal/images,
# hack/image): edgeplane's (every command under cmd/, the manager as the
# entrypoint) and the pause and podreport images the real-node tests run.
comma := ,
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
HOST_PLATFORM    = linux/$(shell $(GO) env GOARCH)
.PHONY: image-binaries
image-binaries: ## Build the static binaries of edgeplane's image for IMAGE_PLATFORMS into bin/image/<os>_<arch>/.
	hack/build-image-binaries.sh $(subst $(comma), ,$(IMAGE_PLATFORMS))

.PHONY: image
image: ## Build the OCI image indexes (IMAGE_PLATFORMS: linux/amd64 and linux/arm64) of edgeplane, pause and podreport into bin/image/oci/<name>/, what `crane push` sends a registry (docs/operations.md, "Container images").
	$(GO) run ./hack/image -layout bin/image/oci -platforms $(IMAGE_PLATFORMS) $(if $(IMAGES),-images $(IMAGES))

.PHONY: image-load
image-load: ## Write each image for this machine's architecture to bin/image/<name>.tar, tagged as the chart and the tests name it; with CONTAINERD_ADDRESS=<socket>, also `ctr -n k8s.io images import` them there.
	$(GO) run ./hack/image -tarballs bin/image $(if $(IMAGES),-images $(IMAGES)) $(if $(CONTAINERD_ADDRESS),-import $(CONTAINERD_ADDRESS))

# The image tests (internal/images) compile and link images' binaries:
# compiling them first keeps that out of the tests' time budget.
.PHONY: image-test-binaries
image-test-binaries:
	IMAGE_BIN_DIR=bin/image/test-cache/edgeplane hack/build-image-binaries.sh $(HOST_PLATFORM) > /dev/null
	IMAGE_BIN_DIR=bin/image/test-cache/test IMAGE_PACKAGES="./test/images/pause ./test/images/podreport" \
		hack/build-image-binaries.sh $(subst $(comma), ,$(IMAGE_PLATFORMS)) > /dev/null

.PHONY: cni-plugins
cni-plugins: ## Build the reference CNI plugins (bridge, macvlan, loopback, host-local, portmap) and cnitool for the CNI tests, cni-demo and the real nodes into bin/cni/<version> (cached).
	hack/build-cni-plugins.sh

.PHONY: prometheus-tools
prometheus-tools: ## Build promtool and promql-metrics (alert-rule and dashboard tests) from the Prometheus module into bin/prometheus/<version> (cached).
	hack/build-prometheus-tools.sh

.PHONY: k8s-bin
k8s-bin: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok into bin/k8s/<version> (cached).
	hack/build-k8s.sh

.PHONY: k8s-node-bin
k8s-node-bin: ## Build the real nodes' kubelet and kube-proxy from the control plane's k8s.io/kubernetes into bin/k8s/<version> (cached).
	hack/build-k8s.sh node

.PHONY: node-runtime
node-runtime: ## Install the real nodes' container runtime from Debian's packages: containerd, runc, iptables (needs root; a no-op once installed).
	hack/install-node-runtime.sh

# Everything a cluster with real nodes needs besides the control plane.
.PHONY: real-nodes
real-nodes: k8s-node-bin cni-plugins node-runtime ## Build and install everything the real nodes need (k8s-node-bin, cni-plugins, node-runtime).

##@ Test

.PHONY: test-tools
test-tools: ## Compile the pinned tools the tests run (helm, kustomize) and the edgeplane binaries into the Go build cache, so no test's time budget includes a build.
	@# go tool caches a tool's executable in the build cache: the tests' own
	@# `go tool` calls then start it at once instead of compiling it while the
	@# other test packages compete for the CPU.
	$(TOOLS) helm version --short >/dev/null
	$(TOOLS) kustomize version >/dev/null
	$(GO) build -tags '$(GO_BUILD_TAGS)' ./cmd/...

.PHONY: test
test: k8s-bin cni-plugins prometheus-tools test-tools image-test-binaries ## Run unit, short fuzz, envtest integration and compatibility tests (builds and installs what they need first).
	hack/install-compat-tools.sh
	@# A count, not a duration: on a loaded machine a timed run can end with the
	@# fuzzer's own "context deadline exceeded" while a worker is still busy.
	hack/fuzz.sh 300x
	GO_TEST_P=$(GO_TEST_P) hack/gotest.sh $(GO_TEST_FLAGS)

# test/e2e/node is e2e-node's: it needs the images.
E2E_NODE_PKG := ./test/e2e/node
.PHONY: e2e
e2e: k8s-bin real-nodes test-tools ## Run the end-to-end tests on local clusters (real scheduler, controller-manager, kwok nodes and, in test/e2e/realnodes, real nodes; needs root), all but e2e-node's.
	@if compgen -G 'test/e2e/*/*_test.go' > /dev/null; then \
		$(GO) test -tags e2e -p 1 -count=1 -timeout 45m $(GO_TEST_FLAGS) \
			$$($(GO) list -tags e2e ./test/e2e/... | grep -v '/test/e2e/node$$'); \
	else echo "e2e: no end-to-end suites yet"; fi

.PHONY: e2e-node
e2e-node: k8s-bin real-nodes test-tools image-load ## Install edgeplane with `helm install` of charts/edgeplane from the loaded image onto two real nodes and test it there (test/e2e/node; needs root).
	$(GO) test -tags e2e -p 1 -count=1 -timeout 45m $(GO_TEST_FLAGS) $(E2E_NODE_PKG)

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZ_TIME each (FUZZ_SAVE_CORPUS=N adds the N smallest new interesting inputs to its checked-in testdata/fuzz corpus).
	hack/fuzz.sh $(FUZZ_TIME)

.PHONY: bench
bench: k8s-bin ## Run every benchmark BENCH_COUNT times (3), the failover one 5, and write bench/report.md and bench/report.json: medians with min and max (speed and memory are measured here, never in tests).
	set -o pipefail; $(GO) test -run '^$$' -bench . -skip '$(BENCH_SCALE_ONLY)' -benchmem -count=$(BENCH_COUNT) -p 1 -timeout 180m ./... 2>&1 | tee bench/raw.txt
	set -o pipefail; n=$$((5 - $(BENCH_COUNT))); if [ $$n -gt 0 ]; then $(GO) test -run '^$$' -bench BenchmarkLeaderFailover -benchtime 1x -count=$$n -p 1 -timeout 30m ./test/bench/failover/ 2>&1 | tee -a bench/raw.txt; fi
	$(BENCH_REPORT)

# The scale envelope's benchmarks (and the development one sized by
# -scale-nodes) are too long for `make bench`; bench-scale runs the envelope.
BENCH_SCALE_ONLY    := ^(BenchmarkScale5000Nodes50000Pods|BenchmarkScaleNodes)$$
BENCH_SCALE_COUNT   ?= 1
BENCH_SCALE_RESYNCS ?= 3
# The report covers both runs: bench/raw.txt (make bench) and, once written,
# bench/raw-scale.txt (make bench-scale).
BENCH_REPORT = cat bench/raw.txt $$(test -f bench/raw-scale.txt && echo bench/raw-scale.txt) | \
	$(GO) run ./hack/benchreport -in - -targets bench/targets.yaml -md bench/report.md -json bench/report.json

.PHONY: bench-scale
bench-scale: k8s-bin ## Issue 21's scale envelope: 5,000 kwok nodes, 50,000 pods, every controller on, BENCH_SCALE_COUNT runs (1) of BENCH_SCALE_RESYNCS manager restarts (3) into bench/raw-scale.txt, then bench/report.md (11–17 min a run; docs/operations.md, "The 5,000-node envelope").
	set -o pipefail; $(GO) test -run '^$$' -bench '^BenchmarkScale5000Nodes50000Pods$$' -benchtime 1x -count=$(BENCH_SCALE_COUNT) -p 1 -timeout 300m ./test/bench/scale/ -scale-resyncs $(BENCH_SCALE_RESYNCS) 2>&1 | tee bench/raw-scale.txt
	$(BENCH_REPORT)

##@ Chaos (issue 10)

# --- chaos: make chaos / make chaos-ci (test/chaos, docs/chaos.md) ---
CHAOS_PROFILE ?= full
CHAOS_TIMEOUT ?= 60m
.PHONY: chaos
chaos: k8s-bin ## Chaos run: two manager replicas with leader election, churn, leader kills, fault windows (emulator faults, credential revocation, quota shrink, webhook outage) and an etcd pause; then the invariants, and the kills, failovers and proven faults the profile requires (CHAOS_SEED=N reproduces a run; docs/chaos.md).
	CHAOS_PROFILE=$(CHAOS_PROFILE) $(GO) test -tags chaos -run '^TestChaos$$' -count=1 -timeout $(CHAOS_TIMEOUT) -v $(GO_TEST_FLAGS) ./test/chaos/

.PHONY: chaos-ci
chaos-ci: CHAOS_PROFILE = ci
chaos-ci: CHAOS_TIMEOUT = 30m
chaos-ci: chaos ## The chaos run's short profile, under 15 minutes including cluster start-up (.ci/run runs it).
# --- end chaos ---

##@ Demo

# The real nodes (kubelet, containerd, kube-proxy) edgeplane runs on; needs root.
DEMO_REAL_NODES ?= 2
export DEMO_REAL_NODES
.PHONY: demo
demo: k8s-bin build real-nodes test-tools image-load ## Start the local cluster (kwok nodes and DEMO_REAL_NODES=2 real ones; root), `helm install` edgeplane onto the real nodes from the loaded image, apply examples/ and examples/realnodes/ and show them.
	hack/demo.sh up $(DEMO_DIR)

.PHONY: demo-down
demo-down: ## Stop everything `make demo` started (with its real nodes' processes, namespaces and cgroups, and the cni-demo's network namespace).
	hack/cni-demo.sh down $(DEMO_DIR)
	hack/demo.sh down $(DEMO_DIR)

.PHONY: cni-demo
cni-demo: cni-plugins build ## On the running demo: CNI ADD (bridge + edgeplane IPAM) for a float-IP pod into a network namespace, shown as `ip addr` (needs root).
	hack/cni-demo.sh up $(DEMO_DIR)
