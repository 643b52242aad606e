#!/usr/bin/env bash
# Reference recordings for chapters 05 (MIG), 12 (monitoring) and 27 (health checks), made on the H200 machine.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/ops.sh
# Read-only: nothing here changes a GPU setting (no MIG mode change, no clocks, no compute mode). About 15 s.
# Needs: nvidia-ml-py, prometheus-client, psutil, pandas, pyyaml (all in requirements.txt); torch for the load.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# ch12: every DCGM-named field from NVML, sampled every 0.25 s over 5 s of a bf16 matmul loop on the GPU
step "$PY" -m helpers exporter sample --seconds 5 --interval 0.25 --out "$DEST/exporter.json"
# ch05: the MIG profiles and placements this GPU offers (nvidia-smi mig -lgip / -lgipp; lists nothing if MIG is off)
step "$PY" -m helpers mig list --out "$DEST/mig.json"
# ch27: the node health check as the Ansible role runs it (one GPU expected); exit 3 = unhealthy, still recorded
step "$PY" -m helpers health check --expect-gpus 1 --out "$DEST/health.json" || [ $? -eq 3 ]
echo "ops.sh: done in $((SECONDS - t0)) s"
