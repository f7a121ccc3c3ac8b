#!/usr/bin/env bash
# make cni-demo / make demo-down: on the running `make demo`, the runtime's part
# for one float-IP pod (kwok runs the demo's pods without a network). It installs
# edgeplane-cni-ipam as the chart's DaemonSet does (the chart's ServiceAccount and
# ClusterRole, then `edgeplane-cni-ipam install` writing the plugin's kubeconfig
# with that ServiceAccount's token), creates a network namespace for the pod
# default/fip-web-0 and runs CNI ADD with cnitool: the bridge plugin (a bridge
# with no uplink, so nothing leaves the machine) and edgeplane-cni-ipam, which
# reads the pod's float IP from the demo's API server as its ServiceAccount.
# Then it prints the namespace's `ip addr` and routes. Needs root.
#
# The plugin reads its kubeconfig only from /etc/cni/net.d/edgeplane-cni-ipam.kubeconfig
# on a node; this machine is not one, so the demo's plugin is linked to read
# DIR/cni/edgeplane-cni-ipam.kubeconfig instead (-X main.kubeconfigPath). The
# network config names no kubeconfig: it cannot.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmd=${1:?usage: cni-demo.sh up|down DIR}
dir=${2:-.demo}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
k8s_bin=${EDGEPLANE_K8S_BIN_DIR:-$root/bin/k8s/v1.37.0}
cni_bin=${EDGEPLANE_CNI_BIN_DIR:?run through make (make cni-demo)}
kubectl() { "$k8s_bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

namespace=default
pod=fip-web-0
netns=edgeplane-demo
bridge=epdemo0
network=edgeplane-demo
confdir=$dir/cni/net.d
plugin_ns=edgeplane-system
plugin_sa=edgeplane-cni-ipam
plugin_bin=$dir/cni/bin
plugin_kubeconfig=$dir/cni/edgeplane-cni-ipam.kubeconfig

cnitool() {
	CNI_PATH="$cni_bin:$plugin_bin" NETCONFPATH="$confdir" CNI_IFNAME=${CNI_IFNAME:-eth0} \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=$namespace;K8S_POD_NAME=$pod;K8S_POD_UID=$1" \
		"$cni_bin/cnitool" "${@:2}"
}

down() {
	if ! ip netns list 2>/dev/null | grep -qw "$netns"; then
		return 0
	fi
	if [[ $EUID -ne 0 ]]; then
		echo "cni-demo: network namespace $netns is left: removing it needs root (sudo hack/cni-demo.sh down $dir)" >&2
		return 0
	fi
	local uid=""
	[[ -f "$dir/cni/uid" ]] && uid=$(cat "$dir/cni/uid")
	cnitool "$uid" del "$network" "/var/run/netns/$netns" || true
	CNI_IFNAME=lo cnitool "$uid" del lo "/var/run/netns/$netns" || true
	ip netns del "$netns"
	ip link del "$bridge" 2>/dev/null || true
	echo "cni-demo: removed network namespace $netns"
}

# install_plugin does what the chart's floatIP.cni DaemonSet does on a node:
# the chart's ServiceAccount, ClusterRole and binding for the plugin (not the
# DaemonSet: kwok would only pretend to run it), then `edgeplane-cni-ipam
# install` with a token of that ServiceAccount, which copies the plugin into
# DIR/cni/bin and writes its kubeconfig, the token and CA embedded.
install_plugin() {
	[[ "$dir" != *[[:space:]\'\"]* ]] || { echo "cni-demo: the demo directory $dir must not contain spaces or quotes" >&2; exit 1; }
	say "Installing edgeplane-cni-ipam as the chart's DaemonSet does (ServiceAccount $plugin_ns/$plugin_sa, the chart's ClusterRole)"
	go tool -modfile=hack/tools/go.mod helm template edgeplane charts/edgeplane --namespace "$plugin_ns" \
		--set floatIP.cni.enabled=true --show-only templates/cni.yaml |
		awk 'BEGIN { RS = "\n---\n" } !/\nkind: DaemonSet\n/ { printf "---\n%s\n", $0 }' | kubectl apply -f - > /dev/null
	mkdir -p "$dir/cni/sa" "$dir/cni/build" "$plugin_bin"
	kubectl -n "$plugin_ns" create token "$plugin_sa" --duration=1h > "$dir/cni/sa/token"
	kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$dir/cni/sa/ca.crt"
	local server tags
	server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
	tags=$(grep -v '^#' hack/go-build-tags | paste -sd, -)
	go build -tags "$tags" -ldflags "-X main.kubeconfigPath=$plugin_kubeconfig" -o "$dir/cni/build/" ./cmd/edgeplane-cni-ipam
	"$dir/cni/build/edgeplane-cni-ipam" install --host-root=/ --bin-dir="$plugin_bin" --token-dir="$dir/cni/sa" \
		--server="$server" --interval=0
}

up() {
	[[ $EUID -eq 0 ]] || { echo "cni-demo needs root: it creates a network namespace and a bridge" >&2; exit 1; }
	[[ -f "$dir/kubeconfig" ]] && kubectl get --raw /readyz > /dev/null 2>&1 ||
		{ echo "cni-demo: the demo is not running; start it with make demo" >&2; exit 1; }
	down
	say "Waiting for $namespace/$pod's float IP (examples/floatippool/statefulset.yaml)"
	kubectl -n "$namespace" wait --for=condition=Ready --timeout=120s "pod/$pod" > /dev/null
	local uid
	uid=$(kubectl -n "$namespace" get pod "$pod" -o jsonpath='{.metadata.uid}')
	if [[ -z "$(kubectl get floatips --field-selector "status.podUID=$uid" -o name)" ]]; then
		echo "cni-demo: no FloatIP is bound to $namespace/$pod (UID $uid)" >&2
		exit 1
	fi
	kubectl get floatips --field-selector "status.podUID=$uid" -o wide

	install_plugin
	mkdir -p "$confdir"
	echo "$uid" > "$dir/cni/uid"
	# examples/floatippool/cni/10-edgeplane-bridge.conflist, pointed at the demo.
	cat > "$confdir/10-$network.conflist" <<-CONF
		{
		  "cniVersion": "1.0.0",
		  "name": "$network",
		  "plugins": [{
		    "type": "bridge", "bridge": "$bridge", "isGateway": false, "ipMasq": false,
		    "ipam": {"type": "edgeplane-cni-ipam", "waitTimeout": "30s"}
		  }]
		}
	CONF
	echo '{"cniVersion": "1.0.0", "name": "lo", "type": "loopback"}' > "$confdir/99-loopback.conf"
	say "CNI ADD for $namespace/$pod (bridge + edgeplane-cni-ipam, and loopback) into network namespace $netns"
	ip netns add "$netns"
	cnitool "$uid" add "$network" "/var/run/netns/$netns"
	CNI_IFNAME=lo cnitool "$uid" add lo "/var/run/netns/$netns" > /dev/null
	echo
	say "ip -n $netns addr"
	ip -n "$netns" addr
	say "ip -n $netns route"
	ip -n "$netns" route
	say "The plugin's Event on the pod"
	kubectl -n "$namespace" get events --field-selector "involvedObject.name=$pod,reason=FloatIPAssigned" -o custom-columns=REASON:.reason,MESSAGE:.message
	cat <<MSG

The namespace stays until make demo-down (or: sudo hack/cni-demo.sh down $dir).
MSG
}

case "$cmd" in
up) up ;;
down) down ;;
*) echo "usage: cni-demo.sh up|down DIR" >&2; exit 2 ;;
esac
