#!/usr/bin/env bash
# Runs the node:test suites. With an argument, only test files whose path contains it.
# A run that finds no test file fails: an empty run must never look green.
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"
mapfile -t files < <(find packages -path '*/node_modules' -prune -o -path '*/dist' -prune -o -name '*.test.ts' -print | sort | grep -F -- "$filter" || true)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "run-tests: no test files found${filter:+ matching '$filter'}" >&2
  exit 1
fi
echo "run-tests: ${#files[@]} test files"
exec node --import tsx --test --test-concurrency="${OFFSHOOT_TEST_CONCURRENCY:-2}" --test-timeout=600000 "${files[@]}"
