#!/usr/bin/env bash
# Reference recordings for chapters 03 (collectives) and 08 (DDP buckets), run ON THE H200 MACHINE from the repo root:
#   PY=python3 DEST=assets/measurements/h200 bash scripts/record/collectives.sh
# Writes $DEST/collectives_nccl_1gpu.json, $DEST/collectives_gloo_cpu.json, $DEST/ddp_buckets_gloo_cpu.json.
# About a minute. The machine has one GPU, so the NCCL sweep has world size 1: NCCL does no communication for one
# rank (in-place ops return at once, out-of-place ops are a device memcpy) — chapter 03 explains what that measures.
set -euo pipefail
: "${PY:?set PY to the python3 of the machine}"
: "${DEST:?set DEST, e.g. assets/measurements/h200}"
export NCCL_NVLS_ENABLE=0            # keep NVLink SHARP off, as on the book's multi-GPU machines
mkdir -p "$DEST"
t0=$SECONDS

echo "[collectives] NCCL, 1 GPU, 1 KiB .. 1 GiB"
"$PY" -m helpers collectives --backend nccl --world-size 1 --op all --min-bytes 1K --max-bytes 1G --factor 4 \
      --warmup 5 --iters 20 --timeout 300 --out "$DEST/collectives_nccl_1gpu.json"

echo "[collectives] gloo on the host CPUs, 2 and 4 ranks, 1 KiB .. 16 MiB"
"$PY" -m helpers collectives --backend gloo --world-size 2 4 --op all --min-bytes 1K --max-bytes 16M --factor 4 \
      --warmup 3 --iters 10 --timeout 300 --out "$DEST/collectives_gloo_cpu.json"

echo "[ddpcomm] DDP bucket sweep, 2 gloo CPU ranks (the caps of chapter 08's Lab 2)"
"$PY" -m helpers ddpcomm buckets --world-size 2 --backend gloo --caps-mb 0.1 0.5 1 25 \
      --out "$DEST/ddp_buckets_gloo_cpu.json"

echo "[collectives.sh] done in $((SECONDS - t0)) s"
