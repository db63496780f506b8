#!/usr/bin/env bash
# Validates the Claude Code plugin and marketplace manifests with Claude Code's own validator (offline once
# installed). The CLI is large, so it is installed once under .tmp/ and kept out of `make test`, whose plugin test
# checks the same manifests against the documented schema.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.1.328
prefix=.tmp/claude-code-$version
if [[ ! -x $prefix/node_modules/.bin/claude ]]; then
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version"
fi
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
HOME=$home "$prefix/node_modules/.bin/claude" plugin validate plugins/offshoot
HOME=$home "$prefix/node_modules/.bin/claude" plugin validate .
