#!/usr/bin/env bash
# Runs every fuzz target (func FuzzXxx in a _test.go file) for the given -fuzztime
# each: a duration (10s) or a count of inputs (300x). `make test` runs a few hundred
# inputs each; `make fuzz FUZZ_TIME=5m` runs them for real.
# With FUZZ_SAVE_CORPUS=N, the N smallest inputs each target's run found
# interesting (go's cache corpus) are copied into its testdata/fuzz/<Name>/, the
# checked-in corpus that every plain `go test` replays.
set -euo pipefail

fuzztime=${1:-10s}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

mapfile -t files < <(git ls-files -co --exclude-standard '*_test.go' | xargs -r grep -l '^func Fuzz[A-Z0-9_a-z]*(f \*testing.F)' | LC_ALL=C sort)
if [[ ${#files[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz targets"
	exit 0
fi
# save_corpus PKG NAME N copies the N smallest cached corpus entries of a target.
save_corpus() {
	local pkg=$1 name=$2 n=$3 importpath cache dest
	importpath=$(go list "$pkg")
	cache="$(go env GOCACHE)/fuzz/$importpath/$name"
	dest="$pkg/testdata/fuzz/$name"
	[[ -d $cache ]] || return 0
	mkdir -p "$dest"
	local entries i
	mapfile -t entries < <(find "$cache" -type f -printf '%s %p\n' | LC_ALL=C sort -n)
	for ((i = 0; i < n && i < ${#entries[@]}; i++)); do
		cp "${entries[i]#* }" "$dest/"
	done
}

bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
count=0
for f in "${files[@]}"; do
	pkg=./$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
		echo "fuzz: $pkg $name for $fuzztime"
		# Compile the fuzzing build (every dependency instrumented for
		# coverage: minutes on a busy machine) before the clock starts, so
		# the timeout below bounds the run alone; the run then links from
		# the build cache.
		go test -c -fuzz "^${name}\$" -o "$bindir/fuzz.test" "$pkg"
		# A fuzz run that hangs (say, a TestMain that starts a server in every
		# worker) must fail, not stall the build.
		if ! timeout 600 go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"; then
			echo "fuzz: $pkg $name failed or hung" >&2
			exit 1
		fi
		if [[ -n ${FUZZ_SAVE_CORPUS:-} ]]; then
			save_corpus "$pkg" "$name" "$FUZZ_SAVE_CORPUS"
		fi
		count=$((count + 1))
	done
done
echo "fuzz: $count target(s) ran for $fuzztime each without a failure"
