#!/usr/bin/env bash
# Fails when generated files are stale (regenerating into a scratch copy, so a dirty
# work tree is never touched), when code is not gofmt'ed, when go.mod files are not
# tidy, or when go vet or golangci-lint complain. Reports every failure, not just the first.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
failed=()
step() { echo "==> $1"; }

step "generated code and manifests"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar -C "$root" --exclude=./bin --exclude=./.git --exclude=./.demo --exclude='node_modules' -cf - . | tar -C "$scratch" -xf -
if (cd "$scratch" && hack/update-codegen.sh && hack/update-manifests.sh) > "$scratch.log" 2>&1; then
	for d in apis config charts; do
		if ! diff -r "$root/$d" "$scratch/$d"; then
			failed+=("$d/ differs from what 'make generate manifests' produces: run them and commit the result")
		fi
	done
else
	cat "$scratch.log"
	failed+=("regenerating failed")
fi
rm -f "$scratch.log"

step "gofmt"
unformatted=$(git ls-files -co --exclude-standard '*.go' | xargs -r gofmt -l)
if [[ -n "$unformatted" ]]; then
	echo "$unformatted"
	failed+=("gofmt would change the files above: run 'make fmt'")
fi

step "go mod tidy"
for mod in . hack/tools hack/k8s/kubernetes hack/k8s/etcd hack/k8s/kwok hack/cni; do
	if ! (cd "$mod" && go mod tidy -diff); then
		failed+=("$mod/go.mod is not tidy: run 'go mod tidy' there")
	fi
done

step "go vet"
go vet ./... || failed+=("go vet")

step "golangci-lint"
go tool -modfile=hack/tools/go.mod golangci-lint run --allow-parallel-runners ./... || failed+=("golangci-lint")

if [[ ${#failed[@]} -gt 0 ]]; then
	printf 'verify failed:\n'
	printf '  - %s\n' "${failed[@]}"
	exit 1
fi
echo "verify: all checks passed"
