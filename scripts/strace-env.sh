#!/usr/bin/env bash
# Installs Debian's strace, which the ephemeral-fork tests run a daemon under to count its fsyncs; idempotent (skips
# apt when strace is already there). Under CI=true a tool that cannot be installed is an error, never a skip.
set -euo pipefail
if command -v strace >/dev/null; then exit 0; fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends strace >/dev/null
fi
if ! command -v strace >/dev/null; then
  echo "strace-env: strace is missing and could not be installed (apt-get install strace as root)" >&2
  [[ "${CI:-}" == "true" ]] && exit 1
fi
exit 0
