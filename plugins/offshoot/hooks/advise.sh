#!/bin/sh
# Advisory hooks of the offshoot plugin: they only add context, never block (always exit 0), and say nothing when
# offshoot (or node, which it runs on) is not installed.
command -v offshoot >/dev/null 2>&1 || exit 0
command -v node >/dev/null 2>&1 || exit 0
node "$(dirname "$0")/advise.mjs" "$@" 2>/dev/null
exit 0
