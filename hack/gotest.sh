#!/usr/bin/env bash
# Runs the unit, envtest and compatibility tests (`make e2e` runs test/e2e with its
# build tag) and closes with one summary line of packages passed and failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t pkgs < <(go list ./... | grep -v '/test/e2e/')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -p "${GO_TEST_P:-2}" -count=1 "$@" "${pkgs[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -cE '^ok\s' "$log")
failed=$(grep -cE '^FAIL\s' "$log")
echo "packages: $passed passed, $failed failed"
exit "$status"
