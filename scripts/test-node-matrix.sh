#!/usr/bin/env bash
# The fast subset on every supported Node major but the one the whole suite ran on (the `node` on PATH): the
# quickstart, the daemon with live capture, the MCP server, both SDK clients (TypeScript, and Python against that
# Node's offshoot) and make pack's tarballs installed into empty prefixes. Each major is the pinned build that
# scripts/node-env.sh installs (scripts/nodes/<major>/), put first on PATH so the tests and every offshoot they
# start run on it.
set -euo pipefail
cd "$(dirname "$0")/.."
SUBSET=(
  test/e2e/quickstart.test.ts
  test/daemon/daemon-capture.test.ts
  test/mcp/mcp-tools.test.ts
  packages/client/test/client.test.ts
  test/mcp/mcp-pack.test.ts
)
PYTHON_SUBSET=(tests/test_client.py)
current="$(node -p 'process.versions.node.split(".")[0]')"
python="$(scripts/python-env.sh main)"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
ran=0
for major in $(ls scripts/nodes | sort -n); do
  if [[ "$major" == "$current" ]]; then continue; fi
  bin="$(scripts/node-env.sh "$major")"
  echo "node-matrix: the subset on Node $("$bin/node" --version)"
  PATH="$bin:$PATH" scripts/timed.sh "node $major subset" scripts/run-tests.sh "${SUBSET[@]}"
  (cd python/offshoot && PATH="$bin:$PATH" ../../scripts/timed.sh "node $major python client" \
    "$python" -m pytest -q -n 2 -p no:cacheprovider "${PYTHON_SUBSET[@]}") | tee "$out"
  if grep -Eq '[0-9]+ skipped' "$out"; then
    echo "node-matrix: Python client tests were skipped on Node $major; every test must run" >&2
    exit 1
  fi
  ran=$((ran + 1))
done
if [[ $ran -eq 0 ]]; then
  echo "node-matrix: no other pinned major than Node $current" >&2
  exit 1
fi
