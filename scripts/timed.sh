#!/usr/bin/env bash
# Runs CMD and, when OFFSHOOT_TIMINGS names a file, appends a line "LABEL<TAB>seconds<TAB>exit status" to it; exits
# with CMD's status. .ci/run prints the lines as a table of each suite's wall time.
#   scripts/timed.sh LABEL CMD [ARGS...]
set -uo pipefail
label="$1"
shift
SECONDS=0
"$@"
status=$?
if [[ -n "${OFFSHOOT_TIMINGS:-}" ]]; then
  printf '%s\t%d\t%d\n' "$label" "$SECONDS" "$status" >>"$OFFSHOOT_TIMINGS"
fi
exit "$status"
