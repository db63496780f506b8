#!/usr/bin/env bash
# Runs CMD with a local S3 server (scripts/s3-server.sh) and its environment; always stops the server;
# exits with CMD's status.
set -euo pipefail
if [[ $# -eq 0 ]]; then echo "usage: $0 CMD [ARGS...]" >&2; exit 2; fi
here="$(cd "$(dirname "$0")" && pwd)"
env_lines="$("$here/s3-server.sh" start)"
eval "$env_lines"
trap '"$here/s3-server.sh" stop "$OFFSHOOT_S3_SERVER_PID"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
set +e
"$@"
status=$?
set -e
exit "$status"
