#!/usr/bin/env bash
# Builds the local cluster's Kubernetes binaries from their Go modules into bin/k8s/<version>/:
#   build-k8s.sh [control-plane]   etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
#                                  kubectl, kwok (make k8s-bin)
#   build-k8s.sh node              kubelet and kube-proxy for the real nodes (make k8s-node-bin)
# Each binary is built once and cached; a stamp file records the versions it was built from.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# The versions are the ones the wrapper modules in hack/k8s/ require; nothing else sets them.
modversion() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) {print $NF; exit}' "$root/hack/k8s/$1/go.mod"; }
k8s_version=$(modversion kubernetes k8s.io/kubernetes)
out=${K8S_BIN_DIR:-$root/bin/k8s/$k8s_version}
mkdir -p "$out"

# Two builds at once (say, make test and make demo in two terminals) would race on
# the same files: let one wait for the other.
exec 9> "$out/.lock"
flock 9

major=${k8s_version#v}; major=${major%%.*}
minor=${k8s_version#v*.}; minor=${minor%%.*}
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

build() { # build <name> <wrapper dir> <package> <ldflags> <module>
	local name=$1 dir=$2 pkg=$3 flags=$4
	local stamp="$out/.$name.version"
	local want="$pkg@$(modversion "$dir" "$5")"
	if [[ -x "$out/$name" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		return 0
	fi
	echo "building $name ($want) into $out — the first build takes several minutes" >&2
	local start=$SECONDS
	(cd "$root/hack/k8s/$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $flags" -o "$out/$name.tmp" "$pkg")
	mv "$out/$name.tmp" "$out/$name"
	echo "$want" > "$stamp"
	echo "built $name in $((SECONDS - start))s" >&2
}

case ${1:-control-plane} in
node)
	# The same wrapper module and version as the control plane, so a real
	# node runs the kubelet the API server expects.
	build kubelet kubernetes k8s.io/kubernetes/cmd/kubelet "$ldflags" k8s.io/kubernetes
	build kube-proxy kubernetes k8s.io/kubernetes/cmd/kube-proxy "$ldflags" k8s.io/kubernetes
	echo "$out"
	exit 0
	;;
control-plane) ;;
*)
	echo "usage: $0 [control-plane|node]" >&2
	exit 2
	;;
esac

build etcd etcd go.etcd.io/etcd/server/v3 "" go.etcd.io/etcd/server/v3
build kube-apiserver kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$ldflags" k8s.io/kubernetes
build kube-controller-manager kubernetes k8s.io/kubernetes/cmd/kube-controller-manager "$ldflags" k8s.io/kubernetes
build kube-scheduler kubernetes k8s.io/kubernetes/cmd/kube-scheduler "$ldflags" k8s.io/kubernetes
build kubectl kubernetes k8s.io/kubernetes/cmd/kubectl "$ldflags" k8s.io/kubernetes
build kwok kwok sigs.k8s.io/kwok/cmd/kwok "" sigs.k8s.io/kwok

# kwok needs its Stage objects; they ship inside the module, so they are taken
# again whenever kwok is rebuilt from another version.
stages="$out/kwok-stages.yaml"
if [[ ! -s "$stages" || "$stages" -ot "$out/.kwok.version" ]]; then
	kwok_dir=$(cd "$root/hack/k8s/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	: > "$stages.tmp"
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		echo "---" >> "$stages.tmp"
		cat "$kwok_dir/kustomize/stage/$f" >> "$stages.tmp"
	done
	mv "$stages.tmp" "$stages"
fi
echo "$out"
