#!/usr/bin/env bash
# Installs Debian's chromium for the dashboard's browser tests; idempotent (skips apt when it is already there).
# Under CI=true a browser that cannot be installed is an error, never a skip.
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then exit 0; fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >/dev/null
fi
if [[ ! -x /usr/bin/chromium ]]; then
  echo "browser-env: /usr/bin/chromium is missing and could not be installed (apt-get install chromium as root)" >&2
  [[ "${CI:-}" == "true" ]] && exit 1
fi
exit 0
