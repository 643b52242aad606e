# Sourced (not run) by the record scripts: strict mode, $PY and $DEST required, $DEST created, and `step`, which
# echoes a command with the seconds since the script began and then runs it. record.py runs *.sh only.
set -euo pipefail
: "${PY:?set PY to the python with torch (e.g. python3)}"
: "${DEST:?set DEST (e.g. assets/measurements/h200)}"
mkdir -p "$DEST"
t0=$SECONDS
step() { echo "== $* ($((SECONDS - t0)) s)"; "$@"; }
