#!/usr/bin/env bash
# Chapters 01-02, beyond what foundation.sh records (device, transfer, backends): what the GPU reports about
# itself (SM count, L2 size, memory bus width and clock, shared memory and registers per SM), which chapter 02's
# Lab 2 uses to rebuild the HBM bandwidth from the bus width. Run by `make record-h200` (scripts/record.py) from
# the repo root with $PY and $DEST set. A few seconds.
set -euo pipefail
: "${PY:?set PY to the python to use}" "${DEST:?set DEST to the output folder}"
$PY -m helpers hardware --out "$DEST/gpu_properties.json"
