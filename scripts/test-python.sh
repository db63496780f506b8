#!/usr/bin/env bash
# Checks and tests of the Python packages under python/ and of the Python examples under examples/, in the
# project-local .venv-py/ (scripts/python-env.sh).
#
#   scripts/test-python.sh          ruff, mypy --strict and pytest for every package
#   scripts/test-python.sh lint     ruff (lint and format) and mypy --strict only
#   scripts/test-python.sh test     pytest only (needs `make build`: the tests run the repository's ./offshoot)
#   scripts/test-python.sh MODE DIR only the packages and examples whose directory contains DIR
#
# Under CI=true a missing prerequisite or a skipped test fails the run: nothing may pass by not running.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mode="${1:-all}"
filter="${2:-}"
case "$mode" in all | lint | test) ;; *) echo "usage: $0 [all|lint|test] [DIR]" >&2; exit 2 ;; esac

log() { echo "test-python: $*" >&2; }
ci() { [[ "${CI:-}" == "true" || "${CI:-}" == "1" ]]; }

python="$(scripts/python-env.sh)"
bin="$(dirname "$python")"
# The packages under python/ and the Python examples (an examples/ directory with a pyproject.toml).
mapfile -t projects < <(find python examples -mindepth 2 -maxdepth 2 -name pyproject.toml -printf '%h\n' 2>/dev/null |
  sort | grep -F -- "$filter" || true)
if [[ ${#projects[@]} -eq 0 ]]; then
  log "no package under python/${filter:+ matching '$filter'}"
  exit 1
fi

if [[ "$mode" != test ]]; then
  for p in "${projects[@]}"; do
    log "lint $p"
    (cd "$p" && "$bin/ruff" check --quiet . && "$bin/ruff" format --check --quiet . && "$bin/mypy" --strict .)
  done
fi

if [[ "$mode" != lint ]]; then
  if [[ ! -f packages/offshoot/dist/cli/main.js ]]; then
    log "the offshoot CLI is not built; run 'make build' first"
    exit 1
  fi
  if ! command -v sqlite3 >/dev/null; then
    log "the sqlite3 CLI is missing (apt-get install sqlite3)"
    exit 1
  fi
  export OFFSHOOT_BIN="$root/offshoot"
  out="$(mktemp)"
  trap 'rm -f "$out"' EXIT
  for p in "${projects[@]}"; do
    log "pytest $p"
    (cd "$p" && "$python" -m pytest -q -n "${OFFSHOOT_PY_WORKERS:-2}" -p no:cacheprovider) | tee "$out"
    if ci && grep -Eq '[0-9]+ skipped' "$out"; then
      log "$p: tests were skipped under CI=true; every test must run"
      exit 1
    fi
  done
fi
