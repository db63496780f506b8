#!/usr/bin/env bash
# A local S3 server for tests: moto, single-threaded (scripts/moto_serve.py), bound to 127.0.0.1.
#
#   scripts/s3-server.sh start        install moto into .venv-s3/ if needed, start it, print `export` lines
#   scripts/s3-server.sh stop [PID]   stop the server started by `start` (PID defaults to $OFFSHOOT_S3_SERVER_PID,
#                                     else every server this checkout started)
#
# Use it as: eval "$(scripts/s3-server.sh start)"; ...; scripts/s3-server.sh stop
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${OFFSHOOT_S3_VENV:-$root/.venv-s3}"
state="$root/.tmp/s3-server"
moto_version="5.2.5"
requirements=("moto[s3]==$moto_version" 'flask>=3' 'flask-cors>=6')

log() { echo "s3-server: $*" >&2; }

# The stamp records what was installed, so a warm start does not pay for importing moto just to check it.
stamp="$venv/.offshoot-requirements"

ensure_venv() {
  if [[ -x "$venv/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "${requirements[*]}" ]]; then return 0; fi
  log "installing moto $moto_version into ${venv#"$root"/}"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${requirements[@]}" >&2
  "$venv/bin/python" -c 'import flask, flask_cors, moto.server' || { log "moto $moto_version did not install"; exit 1; }
  echo "${requirements[*]}" >"$stamp"
}

free_port() {
  "$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# True once moto answers on the port (a plain HTTP request over bash's /dev/tcp: no process per poll).
ready() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /moto-api/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    read -r -t 2 status <&3 && [[ "$status" == HTTP/*" 200 "* ]]
  ) 2>/dev/null
}

# Only pids whose command line is our launcher count: a recycled pid must never be killed.
is_ours() {
  [[ -r "/proc/$1/cmdline" ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q 'moto_serve.py'
}

start() {
  ensure_venv
  mkdir -p "$state"
  local attempt port pid logfile old
  # A stopped server's log is kept until the next start, so a failed run can still be read.
  for old in "$state"/*.log; do
    [[ -e "$old" && ! -e "${old%.log}.pid" ]] && rm -f "$old"
  done
  for attempt in 1 2 3; do
    port="$(free_port)"
    logfile="$state/$port.log"
    "$venv/bin/python" "$root/scripts/moto_serve.py" 127.0.0.1 "$port" >"$logfile" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$state/$port.pid"
    for _ in $(seq 1 400); do
      if ready "$port"; then
        cat <<ENV
export OFFSHOOT_TEST_S3_ENDPOINT=http://127.0.0.1:$port
export OFFSHOOT_TEST_S3_SERVER=moto
export OFFSHOOT_S3_SERVER_PID=$pid
export AWS_ACCESS_KEY_ID=test
export AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
ENV
        log "moto $moto_version listening on 127.0.0.1:$port (pid $pid, log ${logfile#"$root"/})"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    # Lost the port to another process, or moto failed to start: show why and try a fresh port.
    log "attempt $attempt on port $port failed:"
    tail -n 5 "$logfile" >&2 || true
    kill "$pid" 2>/dev/null || true
    rm -f "$state/$port.pid"
  done
  log "could not start moto"
  exit 1
}

stop_pid() {
  local pid="$1"
  if is_ours "$pid"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  grep -lx "$pid" "$state"/*.pid 2>/dev/null | xargs -r rm -f || true
}

stop() {
  local pid="${1:-${OFFSHOOT_S3_SERVER_PID:-}}"
  if [[ -n "$pid" ]]; then stop_pid "$pid"; return 0; fi
  local f
  for f in "$state"/*.pid; do
    [[ -e "$f" ]] || continue
    stop_pid "$(cat "$f")"
  done
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: $0 start | stop [PID]" >&2; exit 2 ;;
esac
