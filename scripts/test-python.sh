#!/usr/bin/env bash
# Checks and tests of the Python packages under python/ and of the Python examples under examples/, each in the
# project-local environment its framework installs into (scripts/python-env.sh): .venv-py/ for everything but CrewAI,
# .venv-py-crewai/ for the CrewAI adapter's tests (python/offshoot/tests/integrations/crewai) and for the examples
# whose pyproject.toml says `python-env = "crewai"` under [tool.offshoot].
#
#   scripts/test-python.sh          ruff, mypy --strict and pytest for every package
#   scripts/test-python.sh lint     ruff (lint and format) and mypy --strict only
#   scripts/test-python.sh test     pytest only (needs `make build`: the tests run the repository's ./offshoot)
#   scripts/test-python.sh MODE DIR only the packages, examples and test directories whose path contains DIR
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

crewai_tests="tests/integrations/crewai"
crewai_sources=(src/offshoot/integrations/crewai.py "$crewai_tests" tests/conftest.py)
# One job a line: ENV DIR [PATH]: pytest (or mypy) in DIR, on PATH only when given, in environment ENV.
jobs=()
while read -r p; do
  if grep -qs '^python-env = "crewai"' "$p/pyproject.toml"; then jobs+=("crewai $p"); else jobs+=("main $p"); fi
  if [[ "$p" == python/offshoot ]]; then jobs+=("crewai $p $crewai_tests"); fi
done < <(find python examples -mindepth 2 -maxdepth 2 -name pyproject.toml -printf '%h\n' 2>/dev/null | sort)
selected=()
for j in "${jobs[@]}"; do
  read -r _ p sub <<<"$j"
  if [[ "$p/$sub" == *"$filter"* ]]; then selected+=("$j"); fi
done
if [[ ${#selected[@]} -eq 0 ]]; then
  log "no package under python/${filter:+ matching '$filter'}"
  exit 1
fi

declare -A bins=()
env_bin() {
  if [[ -z "${bins[$1]:-}" ]]; then bins[$1]="$(dirname "$(scripts/python-env.sh "$1")")"; fi
  echo "${bins[$1]}"
}

if [[ "$mode" != test ]]; then
  for j in "${selected[@]}"; do
    read -r env p sub <<<"$j"
    bin="$(env_bin "$env")"
    log "lint $p${sub:+/$sub} ($env)"
    if [[ -n "$sub" ]]; then
      (cd "$p" && "$bin/mypy" --strict "${crewai_sources[@]}")
    elif [[ "$p" == python/offshoot ]]; then
      # CrewAI is not in the main environment: its adapter is type-checked in its own, just above or below.
      (cd "$p" && "$bin/ruff" check --quiet . && "$bin/ruff" format --check --quiet . &&
        "$bin/mypy" --strict . --exclude '(^|/)integrations/crewai(\.py$|/)')
    else
      (cd "$p" && "$bin/ruff" check --quiet . && "$bin/ruff" format --check --quiet . && "$bin/mypy" --strict .)
    fi
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
  for j in "${selected[@]}"; do
    read -r env p sub <<<"$j"
    python="$(env_bin "$env")/python"
    log "pytest $p${sub:+/$sub} ($env)"
    (cd "$p" && OFFSHOOT_PY_ENV="$env" "$python" -m pytest -q -n "${OFFSHOOT_PY_WORKERS:-2}" -p no:cacheprovider $sub) |
      tee "$out"
    if ci && grep -Eq '[0-9]+ skipped' "$out"; then
      log "$p: tests were skipped under CI=true; every test must run"
      exit 1
    fi
  done
fi
