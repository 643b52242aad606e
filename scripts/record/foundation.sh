#!/usr/bin/env bash
# Reference results for chapters 01-02: the machine report, host<->device copies, CPU-vs-GPU engines.
# Run by `make record-h200` on the H200 machine with $PY and $DEST set.
set -euo pipefail
$PY -m helpers device --out "$DEST/device.json" > /dev/null
$PY -m helpers transfer --sizes 1MiB,4MiB,16MiB,64MiB,256MiB,1GiB --repeats 20 --out "$DEST/transfer.json"
$PY -m helpers backends --matmul-n 8192 --elementwise-n 268435456 --repeats 10 --out "$DEST/backends.json"
