#!/usr/bin/env bash
# `make pack`, its Python half: a wheel and an sdist of every package under python/, into one folder (default
# dist/python), so `pip install --find-links dist/python offshoot-db langgraph-checkpoint-offshoot` works outside the
# repository (docs/installation.md): the saver's requirement on offshoot-db resolves to the wheel beside it. Built by
# the pinned build and hatchling of .venv-py-pack/ (scripts/python-env.sh pack), without build isolation, so nothing
# is fetched to build; the wheel is built from the sdist, which proves the sdist complete. Nothing is published.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$root/dist/python}")"
python="$("$root/scripts/python-env.sh" pack)"
rm -rf "$out"
mkdir -p "$out"
while read -r project; do
  # build narrates every step on stderr: shown only when it fails.
  if ! log="$("$python" -m build --no-isolation --outdir "$out" "$project" 2>&1)"; then
    echo "$log" >&2
    exit 1
  fi
done < <(find "$root/python" -mindepth 2 -maxdepth 2 -name pyproject.toml -printf '%h\n' | sort)
find "$out" -maxdepth 1 -type f -printf '%P\n' | sort | sed "s|^|${out#"$PWD"/}/|"
