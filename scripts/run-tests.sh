#!/usr/bin/env bash
# Runs the node:test suites (packages/ and the examples' own tests). With arguments, only test files whose path
# contains one of them. A run that finds no test file fails: an empty run must never look green.
# OFFSHOOT_TEST_TIMEOUT_MS bounds each file (10 minutes unless a target that builds native code says otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t all < <(find packages examples -path '*/node_modules' -prune -o -path '*/dist' -prune -o -name '*.test.ts' -print | sort)
files=()
for f in "${all[@]}"; do
  if [[ $# -eq 0 ]]; then files+=("$f"); continue; fi
  for filter in "$@"; do
    if [[ "$f" == *"$filter"* ]]; then files+=("$f"); break; fi
  done
done
if [[ ${#files[@]} -eq 0 ]]; then
  echo "run-tests: no test files found${1:+ matching $*}" >&2
  exit 1
fi
echo "run-tests: ${#files[@]} test files"
exec node --import tsx --test --test-concurrency="${OFFSHOOT_TEST_CONCURRENCY:-2}" --test-timeout="${OFFSHOOT_TEST_TIMEOUT_MS:-600000}" "${files[@]}"
