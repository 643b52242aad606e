#!/usr/bin/env bash
# Reference measurements for chapter 28's hierarchical roofline, recorded on the H200.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/hroofline.sh
# Every file is written by a helpers CLI with --out, so it carries its provenance. About two minutes on one H200.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# the ceilings: one read kernel over working sets 16 KiB .. 4 GiB (L1, L2, HBM), SM clock/power/throttle sampled
step "$PY" -m helpers hroofline sweep --out "$DEST/hroofline_sweep.json"
# each workload's bytes at L1, L2 and HBM from Nsight Compute's counters (caches flushed per kernel, clocks left alone)
step "$PY" -m helpers ncu traffic --out "$DEST/ncu_traffic.json"
# the raw ncu CSV of one workload, kept as a real-output test file for the parser (tests/data/real/ncu/)
mkdir -p "$DEST/raw"
ncu --csv --clock-control none --profile-from-start off \
    --metrics gpu__time_duration.sum,l1tex__t_bytes.sum,lts__t_bytes.sum,dram__bytes.sum \
    "$PY" -m helpers.compute.ncu workload softmax_bf16 > "$DEST/raw/ncu_softmax_h200.csv"
ncu --version > "$DEST/raw/ncu_version.txt"
echo "hroofline.sh: done in $((SECONDS - t0)) s"
