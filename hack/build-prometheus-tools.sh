#!/usr/bin/env bash
# Builds promtool and promql-metrics from the Prometheus module that
# hack/prometheus/go.mod pins into bin/prometheus/<version>/, for the alert-rule
# and dashboard tests (test/monitoring). Each binary is built once
# and cached; a stamp file records what it was built from.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
modversion() { awk -v m="$1" '$1 == m || ($1 == "require" && $2 == m) {print $NF; exit}' "$root/hack/prometheus/go.mod"; }
version=$(modversion github.com/prometheus/prometheus)
out=${EDGEPLANE_PROMETHEUS_BIN_DIR:-$root/bin/prometheus/$version}
mkdir -p "$out"

# Two builds at once (two make test runs) would race on the same files.
exec 9> "$out/.lock"
flock 9

build() { # build <name> <package> <stamp value>
	local name=$1 pkg=$2 want=$3 stamp="$out/.$1.version"
	if [[ -x "$out/$name" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		return 0
	fi
	echo "building $name ($want) into $out" >&2
	(cd "$root/hack/prometheus" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/$name.tmp" "$pkg")
	mv "$out/$name.tmp" "$out/$name"
	echo "$want" > "$stamp"
}

build promtool github.com/prometheus/prometheus/cmd/promtool "github.com/prometheus/prometheus/cmd/promtool@$version"
# promql-metrics is this repository's own source: rebuild when it changes.
build promql-metrics ./promql-metrics "promql-metrics@$version+$(sha256sum "$root/hack/prometheus/promql-metrics/main.go" | cut -c1-16)"
echo "$out"
