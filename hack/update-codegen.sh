#!/usr/bin/env bash
# Generates deepcopy functions and the typed Go clients (clientset, listers, informers,
# apply configurations) under apis/client/ for every API package marked +genclient.
# The generators are pinned Go tool dependencies of hack/tools/go.mod.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
module=github.com/edgeplane/edgeplane
out_pkg=$module/apis/client
header=hack/boilerplate.go.txt
tool() { go tool -modfile=hack/tools/go.mod "$@"; }

# The generators own apis/client completely, so start from an empty folder: a kind
# that was removed must not leave generated code behind, and stale clients must
# not stop the generators from loading the API packages.
rm -rf apis/client

tool controller-gen object:headerFile="$header" paths="./apis/..."

# API packages that ask for clients, as import paths and as group/version.
mapfile -t dirs < <(grep -rl --include='*.go' -E '^\s*//\s*\+genclient' apis | xargs -r -n1 dirname | grep -v '^apis/client' | LC_ALL=C sort -u)
pkgs=(); inputs=()
for d in "${dirs[@]}"; do
	pkgs+=("$module/$d")
	inputs+=(--input "${d#apis/}")
done
[[ ${#pkgs[@]} -gt 0 ]] || { echo "no +genclient packages under apis/" >&2; exit 1; }

# Our kinds embed crossplane's core types (managed resource spec and status,
# provider config usage), which ship no apply configurations of their own. The
# generator only emits types reachable from ours, so a scratch run over both
# packages yields crossplane's; keep those (its combined utils.go assumes a
# registered group crossplane's core package does not have), then generate ours
# against them.
crossplane_core=github.com/crossplane/crossplane/apis/v2/core/v2
crossplane_out=apis/client/applyconfiguration/crossplane/core/v2
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
tool applyconfiguration-gen --go-header-file "$header" \
	--output-dir "$scratch" --output-pkg "$out_pkg/applyconfiguration" \
	"${pkgs[@]}" "$crossplane_core"
mkdir -p "$(dirname "$crossplane_out")"
cp -r "$scratch/core/v2" "$crossplane_out"
externals=$(find "$crossplane_out" -name '*.go' -exec grep -hoE '^type [A-Z][A-Za-z0-9]*ApplyConfiguration struct' {} + |
	awk '{sub(/ApplyConfiguration$/, "", $2); print $2}' | LC_ALL=C sort -u |
	sed "s#.*#$crossplane_core.&:$module/$crossplane_out#" | paste -sd, -)
tool applyconfiguration-gen --go-header-file "$header" \
	--output-dir apis/client/applyconfiguration --output-pkg "$out_pkg/applyconfiguration" \
	--external-applyconfigurations "$externals" \
	"${pkgs[@]}"
tool client-gen --go-header-file "$header" \
	--output-dir apis/client/clientset --output-pkg "$out_pkg/clientset" \
	--clientset-name versioned --apply-configuration-package "$out_pkg/applyconfiguration" \
	--input-base "$module/apis" "${inputs[@]}"
tool lister-gen --go-header-file "$header" \
	--output-dir apis/client/listers --output-pkg "$out_pkg/listers" "${pkgs[@]}"
tool informer-gen --go-header-file "$header" \
	--output-dir apis/client/informers --output-pkg "$out_pkg/informers" \
	--versioned-clientset-package "$out_pkg/clientset/versioned" \
	--listers-package "$out_pkg/listers" "${pkgs[@]}"
