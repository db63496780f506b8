#!/usr/bin/env bash
# The quickstart, end to end, on a local store in a temporary directory: every command is printed before it runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/offshoot-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export OFFSHOOT_STORE="$work/store"
cd "$work"

# Bold command lines on a terminal only: piped or logged, the output carries no escape codes.
bold='' plain=''
if [[ -t 1 ]]; then
  bold=$'\033[1m' plain=$'\033[0m'
fi
run() {
  printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"
  "$@"
}
offshoot() { "$root/offshoot" "$@"; }

echo "offshoot demo: a store in $OFFSHOOT_STORE, the stock sqlite3 CLI as the writer"
run offshoot init
run offshoot create app
db="$(offshoot checkout app)"
run offshoot checkout app
run sqlite3 "$db" "CREATE TABLE todo(id INTEGER PRIMARY KEY, title TEXT, done INTEGER DEFAULT 0);
  INSERT INTO todo(title) VALUES ('write the spec'), ('ship the fork'), ('promote the winner');"
run offshoot checkpoint app seeded --meta run=demo
run offshoot fork app attempt-1 --ttl 1h
attempt="$(offshoot checkout app@attempt-1)"
run offshoot checkout app@attempt-1
run sqlite3 "$attempt" "UPDATE todo SET done = 1 WHERE id = 2; DELETE FROM todo WHERE id = 1; INSERT INTO todo(title) VALUES ('celebrate');"
run offshoot checkpoint app@attempt-1 tests-pass
run offshoot diff app app@attempt-1
run offshoot diff app app@attempt-1 --summary
run offshoot promote app@attempt-1 --onto main --force
run sqlite3 "$db" "SELECT id, title, done FROM todo ORDER BY id;"
run sqlite3 "$db" "DROP TABLE todo;"
run offshoot checkpoint app oops
run offshoot rollback app --to promote
run sqlite3 "$db" "SELECT count(*) AS rows_back FROM todo;"
run offshoot status
run offshoot destroy app@attempt-1
run offshoot gc --grace 0s
echo
echo "demo done: forked, diffed, promoted, rolled back, and cleaned up"
