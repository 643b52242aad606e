#!/usr/bin/env bash
# Multi-GPU reference runs (issue 17), ON A HOST WITH 2-8 GPUs, from the repo root:
#   PY=python3 DEST=assets/measurements/h200 bash scripts/record/multigpu.sh
# Records into ${DEST}x<N>/ (e.g. assets/measurements/h200x8/) where N is the number of GPUs the host has; on a
# one-GPU host it prints why and exits 0 (the single-GPU scripts cover that machine). NVLink multicast (NVLS) stays
# off, as on every machine the book uses. Each file is written by a helpers CLI with --out (provenance included);
# the topology and NCCL environment are recorded beside them.
set -euo pipefail
: "${PY:?set PY to the python3 of the machine}"
: "${DEST:?set DEST, e.g. assets/measurements/h200}"
export NCCL_NVLS_ENABLE=0 NCCL_NVLS_CHUNKSIZE=0 BOOK_QUIET=1
N=$("$PY" -c "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)")
if [ "$N" -lt 2 ]; then
  echo "[multigpu] this host has $N GPU(s): the multi-GPU runs need 2 or more (skipped, nothing written)"
  exit 0
fi
OUT="${DEST}x${N}"
mkdir -p "$OUT"
t0=$SECONDS
step() { echo "== $* ($((SECONDS - t0)) s)"; "$@"; }
SIZES=(2); [ "$N" -ge 4 ] && SIZES=(2 4); [ "$N" -ge 8 ] && SIZES=(2 4 8)

# what the host is: its device report (NVLink topology from nvidia-smi topo -m inside) and the NCCL environment
step "$PY" -m helpers device --out "$OUT/device.json" > /dev/null
env | grep -E '^NCCL_' | sort > "$OUT/nccl_env.txt" || true

# ch03: every collective with NCCL, 8 B .. 16 GiB, at N = 2, 4, 8 (what the host has); data checked per size
step "$PY" -m helpers collectives --backend nccl --world-size "${SIZES[@]}" --op all --min-bytes 8 --max-bytes 16G \
     --factor 4 --warmup 5 --iters 20 --timeout 600 --out "$OUT/collectives_nccl.json"
# ch03/08: ring vs tree forced, all_reduce only, at the largest N (crossovers against NCCL's own choice)
for algo in Ring Tree; do
  step env NCCL_ALGO=$algo "$PY" -m helpers collectives --backend nccl --world-size "$N" --op all_reduce \
       --min-bytes 8 --max-bytes 4G --factor 4 --warmup 5 --iters 20 --timeout 600 \
       --out "$OUT/collectives_nccl_${algo,,}.json"
done
# ch08: DDP gradient buckets with NCCL: how much communication hides behind backward
step "$PY" -m helpers ddpcomm buckets --world-size "$N" --backend nccl --caps-mb 0.1 0.5 1 4 25 100 \
     --out "$OUT/ddp_buckets_nccl.json"
# ch06/07: DDP / FSDP, tensor and pipeline mini-runs with NCCL, one GPU per rank
WS=$(IFS=,; echo "1,${SIZES[*]}")
step "$PY" -m helpers dptrain --model mlp,gpt --world-size "$WS" --steps 5 --timeout 600 --out "$OUT/dptrain.json"
step "$PY" -m helpers tensorpar --world-size 2 --out "$OUT/tensorpar.json"
step "$PY" -m helpers pipeline real --world-size $(( N < 4 ? N : 4 )) --schedule gpipe,1f1b --out "$OUT/pipeline.json"
# ch08: compute/communication overlap from the profiler trace, NCCL ranks
step "$PY" -m helpers overlap --world-size "$N" --out "$OUT/overlap_nccl.json"
echo "[multigpu] done in $((SECONDS - t0)) s → $OUT"
