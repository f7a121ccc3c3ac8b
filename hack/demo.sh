#!/usr/bin/env bash
# make demo / make demo-down: the local cluster (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kwok nodes, all built from Go modules), the cloud emulator and the manager,
# with examples/ applied. Every process runs on loopback and is stopped by its pid.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmd=${1:?usage: demo.sh up|down DIR}
dir=${2:-.demo}
mkdir -p "$dir/logs"
dir=$(cd "$dir" && pwd)
k8s_bin=${EDGEPLANE_K8S_BIN_DIR:-$root/bin/k8s/v1.37.0}
kubectl() { "$k8s_bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
# Fixed loopback ports below Linux's ephemeral range (32768-60999), from which
# the local cluster's components draw theirs, so the two never collide. Each
# can be moved with its DEMO_* variable (the examples name the emulator's
# address 127.0.0.1:29600: move it and they are not Ready).
cloudsim_addr=${DEMO_CLOUDSIM_ADDR:-127.0.0.1:29600}
webhook_addr=${DEMO_WEBHOOK_ADDR:-127.0.0.1:29443}
floatip_extender_addr=${DEMO_FLOATIP_EXTENDER_ADDR:-127.0.0.1:29040}
floatip_api_addr=${DEMO_FLOATIP_API_ADDR:-127.0.0.1:29041}
metrics_addr=${DEMO_METRICS_ADDR:-127.0.0.1:29080}
health_addr=${DEMO_HEALTH_ADDR:-127.0.0.1:29081}
# Real nodes (a kubelet, containerd and kube-proxy each, running real containers)
# beside the kwok ones: DEMO_REAL_NODES=2 make demo.
real_nodes=${DEMO_REAL_NODES:-0}
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# require_free ADDR...: fails naming the first address something already
# listens on (a previous demo is stopped with make demo-down).
require_free() {
	local addr
	for addr in "$@"; do
		if (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; then
			echo "$addr is in use; stop what listens there (make demo-down for an earlier demo) or move it with its DEMO_* variable (hack/demo.sh)" >&2
			return 1
		fi
	done
}

# start NAME CMD...: runs CMD detached, logging to DIR/logs/NAME.log, pid in DIR/NAME.pid.
start() {
	local name=$1; shift
	if alive "$dir/$name.pid"; then return 0; fi
	setsid nohup "$@" > "$dir/logs/$name.log" 2>&1 < /dev/null &
	echo $! > "$dir/$name.pid"
}

# cloudsim_admin METHOD PATH CONTENT-TYPE CURL-ARGS...: a call of the emulator's
# admin API, with the demo's token (from its header file) and the body's type.
cloudsim_admin() {
	local method=$1 path=$2 type=$3; shift 3
	curl -fsS -X "$method" -H @"$dir/cloudsim-admin.header" -H "Content-Type: $type" "$@" "http://$cloudsim_addr$path" > /dev/null
}

# stop NAME: SIGTERM, then SIGKILL after 30 s.
stop() {
	local pidfile=$dir/$1.pid
	if alive "$pidfile"; then
		local pid; pid=$(cat "$pidfile")
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$pid" 2>/dev/null || true
		echo "stopped $1 (pid $pid)"
	fi
	rm -f "$pidfile"
}

# wait_for WHAT SECONDS CMD...: polls CMD until it succeeds.
wait_for() {
	local what=$1 secs=$2; shift 2
	for _ in $(seq "$((secs * 2))"); do
		if "$@" > /dev/null 2>&1; then return 0; fi
		sleep 0.5
	done
	echo "timed out waiting for $what; logs are in $dir/logs" >&2
	return 1
}

up() {
	# The emulator and the manager may be running already (make demo twice).
	alive "$dir/cloudsim.pid" || require_free "$cloudsim_addr"
	alive "$dir/manager.pid" || require_free "$webhook_addr" "$floatip_extender_addr" "$floatip_api_addr" "$metrics_addr" "$health_addr"
	go build -o bin/localcluster ./hack/localcluster
	say "Starting the local cluster (3 kwok nodes, 1 virtual node and $real_nodes real nodes) in $dir"
	# The scheduler sends pods that request float IPs to the manager's
	# extender (examples/floatippool/kube-scheduler-config.yaml, made local),
	# over TLS with its client certificate. It reads the files when it starts,
	# before the manager runs, so they are made here (the manager takes the
	# extender's side with --floatippool-certs=provided) rather than kept by
	# the manager in its Secret as in a cluster.
	go run ./hack/democerts --dir "$dir/floatip-certs"
	sed -e "s|/etc/kubernetes/scheduler.conf|$dir/kubeconfigs/kube-scheduler.kubeconfig|" \
		-e "s|https://edgeplane-floatip.edgeplane-system.svc:9040/v1|https://$floatip_extender_addr/v1|" \
		-e "s|/etc/kubernetes/edgeplane-floatip/|$dir/floatip-certs/scheduler/|" \
		examples/floatippool/kube-scheduler-config.yaml > "$dir/kube-scheduler-config.yaml"
	if ! bin/localcluster status --dir "$dir" > /dev/null 2>&1; then
		start localcluster-supervisor bin/localcluster up --dir "$dir" --nodes 3 --virtual-nodes 1 \
			--real-nodes "$real_nodes" --timeout 10m \
			--scheduler-flag=--config="$dir/kube-scheduler-config.yaml"
	fi
	# status exits 0 once ready; stop waiting at once if the supervisor died.
	wait_for "the local cluster" 600 bash -c "bin/localcluster status --dir '$dir' || { kill -0 \$(cat '$dir/localcluster-supervisor.pid') 2>/dev/null || exit 0; exit 1; }"
	bin/localcluster status --dir "$dir" > /dev/null || { echo "the local cluster failed to start; see $dir/logs/" >&2; tail -20 "$dir/logs/localcluster-supervisor.log" >&2; exit 1; }
	wait_for "the API server" 60 kubectl get --raw /readyz

	say "Installing the CRDs"
	kubectl apply --server-side --force-conflicts -f config/crd/bases > /dev/null
	kubectl wait --for=condition=Established --timeout=60s -f config/crd/bases > /dev/null

	# As config/default installs them: the webhooks (served by the manager on
	# $webhook_addr) and the node-taint MutatingAdmissionPolicies.
	say "Installing the admission webhooks (served by the manager on $webhook_addr) and policies"
	go tool -modfile=hack/tools/go.mod kustomize build config/default |
		go run ./hack/demowebhooks --url "https://$webhook_addr" --prefix "" | kubectl apply -f - > /dev/null

	if [[ -x bin/edgeplane-cloudsim ]]; then
		say "Starting the cloud emulator on $cloudsim_addr"
		# The emulator's admin API takes a bearer token: one per demo
		# directory, in files only this user reads (the token file for the
		# emulator, a header file for curl), so it is on no command line.
		if [[ ! -s "$dir/cloudsim.token" ]]; then
			(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/cloudsim.token"
				printf 'Authorization: Bearer %s\n' "$(cat "$dir/cloudsim.token")" > "$dir/cloudsim-admin.header")
		fi
		start cloudsim bin/edgeplane-cloudsim --addr "$cloudsim_addr" --admin-token-file "$dir/cloudsim.token"
		# --- AnycastIPBinding: seed the example nodes' CVM instances ---
		wait_for "the cloud emulator" 30 curl -fsS "http://$cloudsim_addr/admin/healthz"
		cloudsim_admin POST /admin/fixtures application/yaml --data-binary @examples/anycastipbinding/cloudsim-fixtures.yaml
		# --- end AnycastIPBinding ---
		# --- PodElasticIP (issues 4, 22): the ENIs holding the kwok pod IPs, on EC2 and on
		# Tencent Cloud (examples/podelasticip/tencent.yaml), and room for addresses.
		cloudsim_admin POST /admin/fixtures application/json --data @examples/podelasticip/cloudsim-fixtures.json
		# The emulator checks SigV4 signatures: besides its well-known key pair
		# (credentials source None) it accepts the tenant example's key
		# (examples/providerconfig/providerconfig-tenant.yaml), for another account.
		cloudsim_admin PATCH /admin/settings application/json \
			--data '{"ec2AddressQuota": 100, "ec2Credentials": {"AKIAEDGEPLANEDEMO": {"secretAccessKey": "edgeplane-demo-secret", "accountId": "210987654321"}}}'
		# --- end PodElasticIP
		# --- NodeElasticIP (issue 22): the example nodes' EC2 instances and a reserved pool.
		cloudsim_admin POST /admin/fixtures application/yaml --data-binary @examples/nodeelasticip/cloudsim-fixtures.yaml
		# --- end NodeElasticIP
	fi

	say "Starting the manager (leader election on)"
	kubectl create namespace edgeplane-system --dry-run=client -o yaml | kubectl apply -f - > /dev/null
	# The IngressDaemonSet health checkers run in edgeplane-system as this
	# ServiceAccount (the manager's defaults), bound to read Deployments, named
	# as config/default names them.
	sed 's/^  name: ingressdaemonset-healthcheck$/  name: edgeplane-ingressdaemonset-healthcheck/' config/rbac/ingressdaemonset_healthcheck_role.yaml | kubectl apply -f - > /dev/null
	# --tenant-endpoints: team-a's ProviderConfig (examples/providerconfig) talks to the
	# emulator too; without the allow-list it would be Ready=False, NotAllowedForTenant.
	start manager bin/edgeplane-manager --kubeconfig "$dir/kubeconfig" --cluster-name demo \
		--tenant-endpoints "http://$cloudsim_addr" \
		--leader-elect --leader-election-namespace edgeplane-system \
		--metrics-bind-address "$metrics_addr" --health-probe-bind-address "$health_addr" \
		--webhook-host "${webhook_addr%:*}" --webhook-port "${webhook_addr##*:}" --webhook-cert-dir "$dir/webhook-certs" \
		--webhook-service-namespace edgeplane-system \
		--floatippool-extender-address "$floatip_extender_addr" --floatippool-api-address "$floatip_api_addr" \
		--floatippool-cert-dir "$dir/floatip-certs/server" --floatippool-certs provided \
		--anycastipbinding-provider-config tencentcloud
	wait_for "the manager to be ready" 120 curl -fsS "http://$health_addr/readyz"
	wait_for "the manager to become leader" 120 bash -c \
		"'$k8s_bin/kubectl' --kubeconfig '$dir/kubeconfig' -n edgeplane-system get lease edgeplane-manager.edgeplane.io -o jsonpath='{.spec.holderIdentity}' | grep -q ."

	say "The float-IP servers refuse callers without credentials"
	scheduler_tls=(--cacert "$dir/floatip-certs/scheduler/ca.crt" --cert "$dir/floatip-certs/scheduler/tls.crt" --key "$dir/floatip-certs/scheduler/tls.key")
	wait_for "the float-IP extender" 60 curl -fsS "${scheduler_tls[@]}" "https://$floatip_extender_addr/healthz"
	echo "extender with kube-scheduler's client certificate: served"
	# Without it, no TLS handshake; the galaxy API without a bearer token: 401.
	if curl -fsS --cacert "$dir/floatip-certs/scheduler/ca.crt" -X POST -d '{}' "https://$floatip_extender_addr/v1/filter" > /dev/null 2>&1; then
		echo "the extender answered a caller without kube-scheduler's client certificate" >&2
		exit 1
	fi
	echo "extender without a client certificate: refused at the TLS handshake"
	code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$dir/floatip-certs/server/ca.crt" "https://$floatip_api_addr/v1/ip")
	[[ $code == 401 ]] || { echo "the galaxy API answered $code to a caller without a token, want 401" >&2; exit 1; }
	echo "galaxy API without a bearer token: $code"

	say "Applying examples/"
	kubectl apply -k examples
	kubectl wait --for=condition=Ready --timeout=120s clusterproviderconfigs --all
	kubectl wait --for=condition=Ready --timeout=120s providerconfigs --all -A
	kubectl wait --for=condition=Ready --timeout=120s floatippools --all
	kubectl wait --for=condition=Ready --timeout=120s clusterburstpolicies --all
	kubectl wait --for=condition=Ready --timeout=120s burstpolicies --all -A
	kubectl wait --for=condition=Ready --timeout=180s ingressdaemonsets --all -A
	kubectl -n default rollout status statefulset/fip-web --timeout=120s
	kubectl -n default rollout status deployment/fip-api --timeout=120s
	# --- AnycastIPBinding: the example nodes' addresses are bound ---
	wait_for "the example nodes' AnycastIPBindings" 60 kubectl get anycastipbinding aia-edge-1 aia-edge-2
	kubectl wait --for=condition=Ready --timeout=120s anycastipbindings --all
	# --- end AnycastIPBinding ---
	# --- PodElasticIP (issue 4)
	wait_for "the translated PodElasticIP" 120 bash -c "'$k8s_bin/kubectl' --kubeconfig '$dir/kubeconfig' -n nginx-demo-ns get peip -l app.kubernetes.io/managed-by=edgeplane-translator -o name | grep -q ."
	kubectl -n nginx-demo-ns wait --for=condition=Ready --timeout=120s peip --all
	kubectl -n nginx-demo-ns get pods -L aws-pod-eip-controller-public-ip
	# --- end PodElasticIP
	# --- NodeElasticIP (issue 22): an Elastic IP on each example node's primary interface
	wait_for "the example nodes' NodeElasticIPs" 60 kubectl get nodeelasticip eip-edge-1 eip-edge-2 eip-edge-3-pool
	kubectl wait --for=condition=Ready --timeout=120s nodeelasticips --all
	say "NodeElasticIPs (AWS emulator): the nodes carry their address and lost their taint"
	kubectl get nodeelasticips -o wide
	kubectl get nodes -l networking.edgeplane.io/elastic-ip -L networking.edgeplane.io/elastic-ip
	kubectl -n eip-demo rollout status deployment/egress-client --timeout=120s
	# --- end NodeElasticIP

	say "Nodes"
	kubectl get nodes -L node.kubernetes.io/instance-type
	say "edgeplane CRDs"
	kubectl get crd | grep -E 'NAME|edgeplane'
	say "kubectl get edgeplane -A"
	kubectl get edgeplane -A
	say "kubectl edgeplane status -A (the plugin: bin/kubectl-edgeplane)"
	bin/kubectl-edgeplane status -A --kubeconfig "$dir/kubeconfig"
	say "kubectl edgeplane why: a pod held on purpose (examples/burstpolicy/floor-held.yaml)"
	# Its one replica must stay local and no local node has the CPU it asks for.
	kubectl apply -f examples/burstpolicy/floor-held.yaml > /dev/null
	kubectl -n burst-demo wait --for=condition=LocalCapacityShort --timeout=120s burstpolicy/report > /dev/null
	held=$(kubectl -n burst-demo get pods -l app=report -o name | head -1)
	bin/kubectl-edgeplane why -n burst-demo "$held" --kubeconfig "$dir/kubeconfig"
	say "kubectl edgeplane why: a served pod (its Elastic IP is bound)"
	served=$(kubectl -n nginx-demo-ns get pods -l app=app-nginx-demo -o name | head -1)
	bin/kubectl-edgeplane why -n nginx-demo-ns "$served" --kubeconfig "$dir/kubeconfig"
	say "kubectl edgeplane why: a pod with an elastic IP on Tencent Cloud (examples/podelasticip/tencent.yaml)"
	bin/kubectl-edgeplane why -n nginx-demo-ns pod/web-tc-0 --kubeconfig "$dir/kubeconfig"
	say "Leader"
	kubectl -n edgeplane-system get lease edgeplane-manager.edgeplane.io -o jsonpath='{.spec.holderIdentity}{"\n"}'
	cat <<MSG

The demo is running. Use it with:
  export KUBECONFIG=$dir/kubeconfig
  $k8s_bin/kubectl get edgeplane -A
A float IP on a pod's interface in a real network namespace (CNI ADD with
edgeplane-cni-ipam, as root): make cni-demo
Logs: $dir/logs/   Stop everything: make demo-down
MSG
}

down() {
	stop manager
	stop cloudsim
	if [[ -x bin/localcluster ]]; then
		bin/localcluster down --dir "$dir" || true
	fi
	stop localcluster-supervisor
	echo "demo stopped"
}

case "$cmd" in
up) up ;;
down) down ;;
*) echo "usage: demo.sh up|down DIR" >&2; exit 2 ;;
esac
