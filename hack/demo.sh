#!/usr/bin/env bash
# make demo / make demo-down: the local cluster (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok nodes and two real nodes, all built from Go modules), the cloud emulator,
# and edgeplane installed as a user does, `helm install` of charts/edgeplane from the image
# `make image-load` built, with examples/ and examples/realnodes/ applied. Every process of the
# machine runs on loopback (the real nodes in network namespaces of their own) and is stopped
# by its pid. Needs root (the real nodes).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmd=${1:?usage: demo.sh up|down DIR}
dir=${2:-.demo}
mkdir -p "$dir/logs"
dir=$(cd "$dir" && pwd)
k8s_bin=${EDGEPLANE_K8S_BIN_DIR:-$root/bin/k8s/v1.37.0}
kubectl() { "$k8s_bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
# The emulator's loopback port, below Linux's ephemeral range (32768-60999), from
# which the local cluster's components draw theirs, so the two never collide. The
# pods reach it at the real nodes' gateway, $gateway:<port> (localcluster up
# --expose-port); the examples name 127.0.0.1:29600, which the demo rewrites to that.
cloudsim_addr=${DEMO_CLOUDSIM_ADDR:-127.0.0.1:29600}
cloudsim_port=${cloudsim_addr##*:}
gateway=172.31.0.1
cloudsim_cluster_url=http://$gateway:$cloudsim_port
# edgeplane runs as the chart installs it, on real nodes (a kubelet, containerd and
# kube-proxy each, running real containers), beside the kwok ones.
real_nodes=${DEMO_REAL_NODES:-2}
release=edgeplane
namespace=edgeplane-system
helm() { go tool -modfile=hack/tools/go.mod helm --kubeconfig "$dir/kubeconfig" "$@"; }
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

# seed_cloudsim gives the emulator the examples' world.
seed_cloudsim() {
	# --- AnycastIPBinding: seed the example nodes' CVM instances ---
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
	# The real nodes' instances: a PodElasticIP finds a real pod's interface there.
	cloudsim_admin POST /admin/fixtures application/yaml --data-binary @examples/realnodes/cloudsim-fixtures.yaml
}

up() {
	if (( real_nodes < 2 )); then
		echo "DEMO_REAL_NODES=$real_nodes: the demo installs edgeplane onto two real nodes at least (its float-IP pool is real-2's)" >&2
		return 1
	fi
	# The emulator may be running already (make demo twice): then it holds the
	# fixtures already.
	local seed=false
	alive "$dir/cloudsim.pid" || { require_free "$cloudsim_addr"; seed=true; }
	go build -o bin/localcluster ./hack/localcluster

	say "Starting the cloud emulator on $cloudsim_addr (the pods reach it at $cloudsim_cluster_url)"
	# The emulator's admin API takes a bearer token: one per demo directory, in
	# files only this user reads (the token file for the emulator, a header file
	# for curl), so it is on no command line. It answers only loopback names, so
	# the pods, which reach the emulator's cloud APIs, never reach the admin API.
	if [[ ! -s "$dir/cloudsim.token" ]]; then
		(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/cloudsim.token"
			printf 'Authorization: Bearer %s\n' "$(cat "$dir/cloudsim.token")" > "$dir/cloudsim-admin.header")
	fi
	start cloudsim bin/edgeplane-cloudsim --addr "$cloudsim_addr" --admin-token-file "$dir/cloudsim.token"
	wait_for "the cloud emulator" 30 curl -fsS "http://$cloudsim_addr/admin/healthz"
	if $seed; then seed_cloudsim; fi

	say "Starting the local cluster (3 kwok nodes, 1 virtual node and $real_nodes real nodes) in $dir"
	if ! bin/localcluster status --dir "$dir" > /dev/null 2>&1; then
		: > "$dir/kube-scheduler.flags"
		start localcluster-supervisor bin/localcluster up --dir "$dir" --nodes 3 --virtual-nodes 1 \
			--real-nodes "$real_nodes" --timeout 10m --expose-port "$cloudsim_port" \
			--scheduler-flags-file "$dir/kube-scheduler.flags"
	fi
	# status exits 0 once ready; stop waiting at once if the supervisor died.
	wait_for "the local cluster" 600 bash -c "bin/localcluster status --dir '$dir' || { kill -0 \$(cat '$dir/localcluster-supervisor.pid') 2>/dev/null || exit 0; exit 1; }"
	bin/localcluster status --dir "$dir" > /dev/null || { echo "the local cluster failed to start; see $dir/logs/" >&2; tail -20 "$dir/logs/localcluster-supervisor.log" >&2; exit 1; }
	wait_for "the API server" 60 kubectl get --raw /readyz

	say "Loading the images (make image-load) into the real nodes' containerd"
	for sock in "$dir"/nodes/real-*/containerd/containerd.sock; do
		for img in edgeplane podreport; do
			ctr --address "$sock" --namespace k8s.io images import "bin/image/$img.tar" > /dev/null
		done
	done

	say "helm install $release charts/edgeplane onto the real nodes (two manager replicas, webhooks and extender behind their Services, the CNI DaemonSet)"
	cat > "$dir/values.yaml" <<VALUES
image:
  pullPolicy: Never
manager:
  clusterName: demo
  # The real nodes: the kwok ones run no containers.
  nodeSelector:
    localcluster.edgeplane.io/real-node: "true"
# team-a's ProviderConfig (examples/providerconfig) talks to the emulator too,
# with the credentials Secret of its own namespace.
tenantEndpoints: ["$cloudsim_cluster_url"]
credentialNamespaces: [team-a]
anycastIP:
  providerConfig: tencentcloud
floatIP:
  cni:
    enabled: true
  schedulerConfig:
    kubeconfig: $dir/kubeconfigs/kube-scheduler.kubeconfig
    certDir: $dir/floatip-scheduler
VALUES
	# credentialNamespaces binds the manager there: the namespace must exist.
	kubectl create namespace team-a --dry-run=client -o yaml | kubectl apply -f - > /dev/null
	# upgrade --install: a second make demo applies changed values too.
	helm upgrade --install "$release" charts/edgeplane --namespace "$namespace" --create-namespace \
		--values "$dir/values.yaml" --wait --timeout 10m

	say "kube-scheduler: the chart's extender configuration (docs/floatippool.md, \"Scheduler extender\")"
	# A scheduler on the host network without cluster DNS reaches the extender by
	# the Service's ClusterIP; its client certificate is the manager's Secret's.
	extender_ip=$(kubectl -n "$namespace" get service "$release-floatip" -o jsonpath='{.spec.clusterIP}')
	helm upgrade "$release" charts/edgeplane --namespace "$namespace" --reuse-values \
		--set "floatIP.schedulerConfig.urlPrefix=https://$extender_ip:9040/v1" --wait --timeout 10m > /dev/null
	kubectl -n "$namespace" get configmap "$release-scheduler-config" -o jsonpath='{.data.kube-scheduler-config\.yaml}' > "$dir/kube-scheduler-config.yaml"
	wait_for "the scheduler's client certificate" 120 kubectl -n "$namespace" get secret "$release-floatip-scheduler-client"
	(umask 077; mkdir -p "$dir/floatip-scheduler"
		for key in tls.crt tls.key ca.crt; do
			kubectl -n "$namespace" get secret "$release-floatip-scheduler-client" -o jsonpath="{.data.${key//./\\.}}" | base64 -d > "$dir/floatip-scheduler/$key"
		done)
	echo "--config=$dir/kube-scheduler-config.yaml" > "$dir/kube-scheduler.flags"
	# localcluster up restarts it on SIGHUP; each start logs "Serving securely".
	starts=$(grep -c 'Serving securely' "$dir/logs/kube-scheduler.log" || true)
	kill -HUP "$(cat "$dir/localcluster-supervisor.pid")"
	wait_for "kube-scheduler to restart with the chart's configuration" 120 bash -c \
		"(( \$(grep -c 'Serving securely' '$dir/logs/kube-scheduler.log') > $starts ))"
	wait_for "the manager to become leader" 120 bash -c \
		"'$k8s_bin/kubectl' --kubeconfig '$dir/kubeconfig' -n $namespace get lease edgeplane-manager.edgeplane.io -o jsonpath='{.spec.holderIdentity}' | grep -q ."

	say "The float-IP extender refuses callers without kube-scheduler's client certificate"
	# Through the Service (kubectl port-forward, as any client in the cluster
	# reaches it), by the name its serving certificate carries.
	local pf_log="$dir/logs/extender-port-forward.log" pf_pid port host="$release-floatip.$namespace.svc"
	# kubectl itself, not the kubectl function, so that $! is its pid.
	"$k8s_bin/kubectl" --kubeconfig "$dir/kubeconfig" -n "$namespace" port-forward "service/$release-floatip" :9040 > "$pf_log" 2>&1 &
	pf_pid=$!
	wait_for "the port-forward to the extender's Service" 30 grep -q 'Forwarding from 127.0.0.1:' "$pf_log"
	port=$(sed -n 's/^Forwarding from 127.0.0.1:\([0-9]*\) .*/\1/p' "$pf_log" | head -1)
	local tls=(--max-time 10 --resolve "$host:$port:127.0.0.1" --cacert "$dir/floatip-scheduler/ca.crt")
	curl -fsS "${tls[@]}" --cert "$dir/floatip-scheduler/tls.crt" --key "$dir/floatip-scheduler/tls.key" "https://$host:$port/healthz" > /dev/null
	echo "extender with kube-scheduler's client certificate: served"
	if curl -fsS "${tls[@]}" -X POST -d '{}' "https://$host:$port/v1/filter" > /dev/null 2>&1; then
		kill "$pf_pid"
		echo "the extender answered a caller without kube-scheduler's client certificate" >&2
		exit 1
	fi
	kill "$pf_pid"
	echo "extender without a client certificate: refused at the TLS handshake"
	echo "galaxy-ipam API: off (floatIP.api.enabled=false, the chart's default): no port to call"

	say "Applying examples/ (their emulator endpoint as the pods reach it: $cloudsim_cluster_url)"
	go tool -modfile=hack/tools/go.mod kustomize build examples | sed "s|http://127.0.0.1:29600|$cloudsim_cluster_url|g" | kubectl apply -f -
	say "Applying examples/realnodes/ (a float-IP pod, an IngressDaemonSet and a PodElasticIP pod on the real nodes)"
	kubectl apply -k examples/realnodes
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
	# --- The real nodes (examples/realnodes)
	kubectl -n real-demo rollout status statefulset/fip-real --timeout=180s
	kubectl -n real-demo wait --for=condition=Ready --timeout=180s peip/eip-real pod/eip-real
	# --- end real nodes

	say "The release (helm list)"
	helm list --namespace "$namespace"
	say "The manager pods (leader election: one holds the lease) on the real nodes"
	kubectl -n "$namespace" get pods -o wide -l app.kubernetes.io/component=manager
	say "A float-IP pod's own interfaces (kubectl exec -n real-demo fip-real-0 -- /nodetest addrs)"
	kubectl -n real-demo exec fip-real-0 -- /nodetest addrs
	kubectl get floatips -o wide --field-selector spec.pool=real-2
	say "The IngressDaemonSet's health port on each real node (what a load balancer checks)"
	for node in $(kubectl get nodes -l localcluster.edgeplane.io/real-node=true -o name); do
		printf '%s:10080/ok: %s\n' "${node#node/}" "$(kubectl get --raw "/api/v1/${node/node\//nodes/}:10080/proxy/ok")"
	done
	say "A PodElasticIP of a real pod: the address is on its real IP, and the pod is Ready"
	kubectl -n real-demo get peip,pods -o wide

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
  helm status $release -n $namespace
Logs: $dir/logs/ (and the pods': kubectl logs)   Stop everything: make demo-down
MSG
}

down() {
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
