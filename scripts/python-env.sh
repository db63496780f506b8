#!/usr/bin/env bash
# The project-local Python environments for the Python packages' tests, each from its own constraints file.
#
#   scripts/python-env.sh          .venv-py/: every pin of python/constraints.txt and each package under python/
#                                  installed editable (offshoot-db with its pytest and framework extras)
#   scripts/python-env.sh crewai   .venv-py-crewai/: python/constraints-crewai.txt (CrewAI pins openai<3, the OpenAI
#                                  Agents SDK openai>=3, so they cannot share one) and offshoot-db with [pytest,crewai]
#   scripts/python-env.sh pack     .venv-py-pack/: python/constraints-pack.txt alone (build, hatchling, twine): the
#                                  tools make pack and make test-pack build and check the wheels and sdists with
#
# The pins are installed by uv (itself pinned, installed into the environment by pip); the packages under python/
# are installed editable by pip, without build isolation.
#
# Makes or refreshes the environment when its inputs changed and prints its interpreter path. A stamp records a hash
# of the inputs (this script, the constraints, every package's pyproject.toml), so a warm run costs a hash and
# nothing else. Packages build with hatchling, pinned in the constraints and used without build isolation, so an
# install needs no package beyond the pins.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
env_name="${1:-main}"
case "$env_name" in
  main) venv="${OFFSHOOT_PY_VENV:-$root/.venv-py}"; constraints="$root/python/constraints.txt" ;;
  crewai) venv="${OFFSHOOT_PY_VENV:-$root/.venv-py}-crewai"; constraints="$root/python/constraints-crewai.txt" ;;
  pack) venv="${OFFSHOOT_PY_VENV:-$root/.venv-py}-pack"; constraints="$root/python/constraints-pack.txt" ;;
  *) echo "usage: $0 [main|crewai|pack]" >&2; exit 2 ;;
esac
stamp="$venv/.offshoot-stamp"
virtualenv_version="21.15.11"
# uv installs the pins: it downloads in parallel, which on a slow link turns a 20-minute pip install into seconds.
uv_version="0.13.8"

log() { echo "python-env: $*" >&2; }

mapfile -t projects < <(find "$root/python" -mindepth 2 -maxdepth 2 -name pyproject.toml -printf '%h\n' | sort)
if [[ ${#projects[@]} -eq 0 ]]; then
  log "no package under python/"
  exit 1
fi

inputs_hash() {
  local f
  for f in "$root/scripts/python-env.sh" "$constraints" "${projects[@]/%//pyproject.toml}"; do
    echo "${f#"$root"/}"
    cat "$f"
  done | sha256sum | cut -d' ' -f1
}

want="$(inputs_hash)"
current() { [[ -x "$venv/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "$want" ]]; }
if current; then
  echo "$venv/bin/python"
  exit 0
fi
# One install at a time: a second run waits for the first and then finds the environment current.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
if command -v flock >/dev/null; then flock 9; fi
if current; then
  echo "$venv/bin/python"
  exit 0
fi

python="${PYTHON:-python3}"
command -v "$python" >/dev/null || { log "$python not found; install Python 3.10 or newer"; exit 1; }
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { log "$python is older than 3.10"; exit 1; }

# A Python without venv/ensurepip (Debian without python3-venv) gets its environment from virtualenv, installed
# with pip into a scratch directory: Python 3 and pip are all a machine needs.
make_venv() {
  if "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    "$python" -m venv "$venv"
    return
  fi
  local boot="$root/.tmp/python-bootstrap"
  log "$python has no venv/ensurepip; making the environment with virtualenv $virtualenv_version"
  PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --no-input --target "$boot" \
    "virtualenv==$virtualenv_version" >&2 || { log "neither venv nor pip-installed virtualenv is available"; exit 1; }
  PYTHONPATH="$boot" "$python" -m virtualenv --quiet "$venv" >&2
}

log "installing the Python test environment ($env_name) into ${venv#"$root"/}"
rm -rf "$venv"
make_venv
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input --quiet)
"${pip[@]}" install "uv==$uv_version" >&2
"$venv/bin/uv" pip install --quiet --python "$venv/bin/python" -r "$constraints" >&2
editables=()
case "$env_name" in
  pack) ;;
  crewai) editables=(-e "$root/python/offshoot[pytest,crewai]") ;;
  main)
    for p in "${projects[@]}"; do
      if [[ "$(basename "$p")" == offshoot ]]; then
        editables+=(-e "$p[pytest,openai-agents,pydantic-evals,llama-index,google-adk]")
      else
        editables+=(-e "$p")
      fi
    done
    ;;
esac
if [[ ${#editables[@]} -gt 0 ]]; then
  "${pip[@]}" install --no-build-isolation --no-deps -c "$constraints" "${editables[@]}" >&2
fi
"${pip[@]}" check >&2 || { log "the installed environment has broken requirements"; exit 1; }
echo "$want" >"$stamp"
echo "$venv/bin/python"
