#!/usr/bin/env bash
# Builds the static binaries the container image packages (every command under
# cmd/) into bin/image/<os>_<arch>/, for each platform given (default linux/amd64).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tags=$(grep -v '^#' hack/go-build-tags | paste -sd, -)
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
for platform in "${@:-linux/amd64}"; do
	os=${platform%/*} arch=${platform#*/}
	out=bin/image/${os}_${arch}
	mkdir -p "$out"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -tags "$tags" -ldflags "-s -w -X main.version=$version" -o "$out/" ./cmd/...
	echo "built $(ls "$out" | tr '\n' ' ')into $out"
done
