#!/usr/bin/env bash
# Chapter 04 — checkpoint writes (one file vs shards written by parallel threads, with and without fsync) to the
# H200 machine's local disk under /tmp. This measures the host's disk and page cache, not the GPU: the first run
# keeps the state in host memory; the second keeps it on the GPU, so each write also copies it to the host.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/ckptwrite.sh
# Needs torch only. About 1–2 minutes: a 1.4 GB checkpoint (100 M parameters × 14 B) written 4× per way.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()
export BOOK_QUIET=1
WORK=$(mktemp -d /tmp/ckptwrite-record.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

step "$PY" -m helpers ckptwrite --path "$WORK" --params 100e6 --width 2048 --shards 4,8,16 --fsync both \
    --repeats 3 --out "$DEST/ckptwrite.json"
step "$PY" -m helpers ckptwrite --path "$WORK" --params 100e6 --width 2048 --shards 8 --fsync on \
    --repeats 2 --state-device cuda --out "$DEST/ckptwrite_gpu.json" \
    || echo "note: no GPU state run (see the line above); ckptwrite_gpu.json not recorded"
echo "ckptwrite.sh: done in $((SECONDS - t0)) s"
