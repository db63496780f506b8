#!/usr/bin/env bash
# A real distributed S3 server for tests: Ceph's RADOS Gateway from Debian's packages, on a single-node cluster
# (one monitor, one OSD with the in-memory object store), bound to 127.0.0.1.
#
#   scripts/rgw-server.sh install      install radosgw if needed (root: apt-get), nothing more
#   scripts/rgw-server.sh start        install radosgw if needed (root: apt-get), start the cluster, print `export` lines
#   scripts/rgw-server.sh stop [PID]   stop the cluster started by `start` (PID defaults to $OFFSHOOT_S3_SERVER_PID)
#
# Use it as: eval "$(scripts/rgw-server.sh start)"; ...; scripts/rgw-server.sh stop
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/.tmp/rgw-server"
packages=(radosgw ceph-mon ceph-osd)

log() { echo "rgw-server: $*" >&2; }

ensure_installed() {
  if command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null; then return 0; fi
  if [[ $(id -u) -ne 0 ]]; then
    log "radosgw is not installed and this is not root: apt-get install ${packages[*]}"
    exit 1
  fi
  log "installing ${packages[*]} from Debian's packages"
  apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
    "${packages[@]}" >&2
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# True once the gateway answers HTTP on the port (bash's /dev/tcp: no process per poll).
ready() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    read -r -t 2 status <&3 && [[ "$status" == HTTP/* ]]
  ) 2>/dev/null
}

write_conf() {
  local dir="$1" fsid="$2" mon_port="$3" port="$4"
  cat >"$dir/ceph.conf" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
# Without crc modes the gateway loops on "get_initial_auth_request returned -13".
ms mon client mode = crc
ms client mode = crc
public addr = 127.0.0.1
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# The monitor refuses to start (exit 28, ENOSPC) when its filesystem has under 5% free by default; this cluster's
# monitor writes a few MiB and its OSD keeps objects in memory, so only a full disk stops it.
mon data avail crit = 0
mon data avail warn = 0
run dir = $dir/run
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
admin socket = $dir/run/\$name.asok
[mon.a]
mon data = $dir/mon
[osd.0]
osd data = $dir/osd0
osd objectstore = memstore
memstore device bytes = 2147483648
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$port
rgw data = $dir/rgw
CONF
}

start() {
  ensure_installed
  mkdir -p "$state"
  local port mon_port fsid dir conf
  port="$(free_port)"
  mon_port="$(free_port)"
  fsid="$(cat /proc/sys/kernel/random/uuid)"
  dir="$state/$port"
  rm -rf "$dir"
  mkdir -p "$dir"/{mon,osd0,run,log,rgw}
  write_conf "$dir" "$fsid" "$mon_port" "$port"
  conf=(-c "$dir/ceph.conf")
  monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" --fsid "$fsid" "$dir/monmap" >/dev/null
  ceph-mon "${conf[@]}" --mkfs -i a --monmap "$dir/monmap" >&2
  if ! ceph-mon "${conf[@]}" -i a >&2; then
    log "ceph-mon did not start; its log:"
    tail -n 20 "$dir/log/mon.a.log" >&2 || true
    stop_dir "$dir"
    exit 1
  fi
  ceph "${conf[@]}" osd create >/dev/null
  ceph-osd "${conf[@]}" -i 0 --mkfs >/dev/null 2>&1
  ceph-osd "${conf[@]}" -i 0 >/dev/null 2>&1
  radosgw "${conf[@]}" -n client.rgw.a >&2
  local up=0
  for _ in $(seq 1 240); do
    if ready "$port"; then up=1; break; fi
    sleep 0.5
  done
  if [[ $up -ne 1 ]]; then
    log "radosgw did not answer on 127.0.0.1:$port; its log:"
    tail -n 20 "$dir/log/client.rgw.a.log" >&2 || true
    stop_dir "$dir"
    exit 1
  fi
  radosgw-admin "${conf[@]}" user create --uid test --display-name test --access-key test --secret-key test >/dev/null
  local pid
  pid="$(cat "$dir/run/client.rgw.a.pid")"
  echo "$dir" >"$state/$pid.dir"
  cat <<ENV
export OFFSHOOT_TEST_S3_ENDPOINT=http://127.0.0.1:$port
export OFFSHOOT_TEST_S3_SERVER=rgw
export OFFSHOOT_S3_SERVER_PID=$pid
export AWS_ACCESS_KEY_ID=test
export AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
ENV
  log "$(radosgw --version | cut -d' ' -f1-3) listening on 127.0.0.1:$port (pid $pid, logs ${dir#"$root"/}/log)"
}

# Stops every daemon of the cluster in dir (only pids whose command line names its ceph.conf) and removes it.
stop_dir() {
  local dir="$1" f pid
  for f in "$dir"/run/*.pid; do
    [[ -e "$f" ]] || continue
    pid="$(cat "$f")"
    if [[ -r "/proc/$pid/cmdline" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$dir/ceph.conf"; then
      kill "$pid" 2>/dev/null || true
    fi
  done
  for f in "$dir"/run/*.pid; do
    [[ -e "$f" ]] || continue
    pid="$(cat "$f")"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}

stop() {
  local pid="${1:-${OFFSHOOT_S3_SERVER_PID:-}}" f
  for f in "$state"/*.dir; do
    [[ -e "$f" ]] || continue
    if [[ -z "$pid" || "$(basename "$f" .dir)" == "$pid" ]]; then
      stop_dir "$(cat "$f")"
      rm -f "$f"
    fi
  done
}

case "${1:-}" in
  install) ensure_installed ;;
  start) start ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: $0 install | start | stop [PID]" >&2; exit 2 ;;
esac
