#!/usr/bin/env bash
# Installs Debian's xfsprogs for the reflink tests and benches (a loop-mounted XFS with reflink=1); idempotent (skips
# apt when mkfs.xfs is already there). Under CI=true a tool that cannot be installed is an error, never a skip.
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"
if command -v mkfs.xfs >/dev/null; then exit 0; fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends xfsprogs >/dev/null
fi
if ! command -v mkfs.xfs >/dev/null; then
  echo "reflink-env: mkfs.xfs is missing and could not be installed (apt-get install xfsprogs as root)" >&2
  [[ "${CI:-}" == "true" ]] && exit 1
fi
exit 0
