#!/usr/bin/env bash
# Runs CMD with a local S3 server and its environment; always stops the server; exits with CMD's status.
#   scripts/with-s3-server.sh [--server moto|rgw] CMD [ARGS...]
# moto (scripts/s3-server.sh, the default) has AWS S3's semantics; rgw (scripts/rgw-server.sh) is Ceph's RADOS
# Gateway, a real distributed object store.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server=moto
if [[ "${1:-}" == "--server" ]]; then
  server="${2:-}"
  shift 2 || true
fi
case "$server" in
  moto) ctl="$here/s3-server.sh" ;;
  rgw) ctl="$here/rgw-server.sh" ;;
  *) echo "$0: unknown server '$server' (moto or rgw)" >&2; exit 2 ;;
esac
if [[ $# -eq 0 ]]; then echo "usage: $0 [--server moto|rgw] CMD [ARGS...]" >&2; exit 2; fi
env_lines="$("$ctl" start)"
eval "$env_lines"
trap '"$ctl" stop "$OFFSHOOT_S3_SERVER_PID"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
set +e
"$@"
status=$?
set -e
exit "$status"
