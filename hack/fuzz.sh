#!/usr/bin/env bash
# Runs every fuzz target (func FuzzXxx in a _test.go file) for the given -fuzztime
# each: a duration (10s) or a count of inputs (300x). `make test` runs a few hundred
# inputs each; `make fuzz FUZZ_TIME=5m` runs them for real.
set -euo pipefail

fuzztime=${1:-10s}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

mapfile -t files < <(git ls-files -co --exclude-standard '*_test.go' | xargs -r grep -l '^func Fuzz[A-Z0-9_a-z]*(f \*testing.F)' | LC_ALL=C sort)
if [[ ${#files[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz targets"
	exit 0
fi
count=0
for f in "${files[@]}"; do
	pkg=./$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
		echo "fuzz: $pkg $name for $fuzztime"
		# A fuzz run that hangs (say, a TestMain that starts a server in every
		# worker) must fail, not stall the build.
		if ! timeout 600 go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"; then
			echo "fuzz: $pkg $name failed or hung" >&2
			exit 1
		fi
		count=$((count + 1))
	done
done
echo "fuzz: $count target(s) ran for $fuzztime each without a failure"
