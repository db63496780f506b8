#!/usr/bin/env bash
# Runs what node:test cannot host: LangGraph's checkpointer validation suite (vitest with globals) against the stock
# SqliteSaver and OffshootSaver in both modes, then fails unless OffshootSaver passes every test the stock one passes.
set -euo pipefail
cd "$(dirname "$0")/.."
report="$(mktemp -d)"
trap 'rm -rf "$report"' EXIT
# The stock saver fails one test upstream, so vitest's exit code says nothing here; the comparison decides.
node_modules/.bin/vitest run --config packages/langgraph/test/validation/vitest.config.ts \
  --reporter=dot --reporter=json --outputFile.json="$report/validation.json" >"$report/vitest.log" 2>&1 || true
if [[ ! -s "$report/validation.json" ]]; then
  cat "$report/vitest.log" >&2
  echo "test-runners: the validation suite wrote no report" >&2
  exit 1
fi
node packages/langgraph/test/validation/compare-report.mjs "$report/validation.json"
