#!/usr/bin/env bash
# Builds the static binaries a container image packages into
# ${IMAGE_BIN_DIR:-bin/image}/<os>_<arch>/, for each platform given (default
# linux/amd64): every command under cmd/ (edgeplane's image), or the Go
# packages listed in IMAGE_PACKAGES (the test images). Any other file there
# is removed, so it holds exactly what the image gets; the binaries are kept
# between runs because go build relinks only those whose inputs changed.
# -trimpath and the version from VERSION (default `git describe`) make the
# same tree give the same bytes, which keeps the images reproducible.
# `make image-binaries` and internal/images (`make image`, the tests) run it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tags=$(grep -v '^#' hack/go-build-tags | paste -sd, -)
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
out_dir=${IMAGE_BIN_DIR:-bin/image}
read -ra packages <<< "${IMAGE_PACKAGES:-./cmd/...}"
mapfile -t binaries < <(go list -tags "$tags" -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' "${packages[@]}" | sed 's#.*/##')
for platform in "${@:-linux/amd64}"; do
	os=${platform%/*} arch=${platform#*/}
	out=$out_dir/${os}_${arch}
	mkdir -p "$out"
	for f in "$out"/* "$out"/.[!.]*; do
		[[ -e $f ]] || continue
		name=${f##*/}
		if [[ ! " ${binaries[*]} " == *" $name "* ]]; then
			rm -rf "$f"
		fi
	done
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -tags "$tags" -ldflags "-s -w -X main.version=$version" -o "$out/" "${packages[@]}"
	echo "built $(ls "$out" | tr '\n' ' ')into $out"
done
