#!/usr/bin/env bash
# A folder of wheels, one for every pin of a constraints file, so that make test-pack can install make pack's wheels
# into empty environments with no index at all (pip --no-index, uv --no-index) and the frameworks still resolve:
#
#   scripts/python-wheels.sh          every pin of python/constraints.txt
#   scripts/python-wheels.sh crewai   every pin of python/constraints-crewai.txt (CrewAI's own closure)
#
# Downloaded by pip from PyPI once (the one step that reaches the network; pip's own cache makes a second clone's
# download local), into .tmp/python-wheels/<env>-<hash of the constraints>/, for this machine's Python. Prints the
# folder; idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
env_name="${1:-main}"
case "$env_name" in
  main) constraints="$root/python/constraints.txt" ;;
  crewai) constraints="$root/python/constraints-crewai.txt" ;;
  *) echo "usage: $0 [main|crewai]" >&2; exit 2 ;;
esac
dir="$root/.tmp/python-wheels/$env_name-$(sha256sum "$constraints" | cut -c1-16)"
if [[ -f "$dir/.complete" ]]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$root/.tmp/python-wheels"
exec 9>"$dir.lock"
if command -v flock >/dev/null; then flock 9; fi
if [[ ! -f "$dir/.complete" ]]; then
  echo "python-wheels: downloading the wheels of ${constraints#"$root"/} into ${dir#"$root"/}" >&2
  python="$("$root/scripts/python-env.sh" pack)"
  rm -rf "$dir"
  # Wheels only: an install from this folder builds nothing.
  "$python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps --only-binary :all: \
    -r "$constraints" -d "$dir" >&2
  touch "$dir/.complete"
fi
echo "$dir"
