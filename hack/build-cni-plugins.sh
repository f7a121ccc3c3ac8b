#!/usr/bin/env bash
# Builds the reference CNI plugins (bridge, macvlan, loopback, host-local,
# portmap) and cnitool from the containernetworking modules that
# hack/cni/go.mod pins into bin/cni/<plugins version>/, for the CNI
# integration test, `make cni-demo` and the local cluster's real nodes.
# Each binary is built once and cached; a stamp file records its version.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
modversion() { awk -v m="$1" '$1 == m || ($1 == "require" && $2 == m) {print $NF; exit}' "$root/hack/cni/go.mod"; }
version=$(modversion github.com/containernetworking/plugins)
out=${EDGEPLANE_CNI_BIN_DIR:-$root/bin/cni/$version}
mkdir -p "$out"

# Two builds at once (make test and make cni-demo) would race on the same files.
exec 9> "$out/.lock"
flock 9

build() { # build <name> <module> <package>
	local name=$1 module=$2 pkg=$3 stamp="$out/.$1.version" want
	want="$pkg@$(modversion "$module")"
	if [[ -x "$out/$name" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		return 0
	fi
	echo "building $name ($want) into $out" >&2
	(cd "$root/hack/cni" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/$name.tmp" "$pkg")
	mv "$out/$name.tmp" "$out/$name"
	echo "$want" > "$stamp"
}

for name in bridge macvlan loopback; do
	build "$name" github.com/containernetworking/plugins "github.com/containernetworking/plugins/plugins/main/$name"
done
build host-local github.com/containernetworking/plugins github.com/containernetworking/plugins/plugins/ipam/host-local
build portmap github.com/containernetworking/plugins github.com/containernetworking/plugins/plugins/meta/portmap
build cnitool github.com/containernetworking/cni github.com/containernetworking/cni/cnitool
echo "$out"
