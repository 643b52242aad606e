#!/usr/bin/env bash
# Reference measurements for chapter 02's Transformer Engine section, recorded on the H200.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/fp8.sh
# Every file is written by a helpers CLI with --out, so it carries its provenance. Under a minute on one H200.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# fp8 (e4m3, per-tensor scales, torch._scaled_mm) against bf16 GEMMs: error vs fp32 and CUDA-event time,
# with SM clock, power and throttle reasons sampled by NVML while each one runs
step "$PY" -m helpers fp8 gemm --n 4096,8192,16384 --repeats 30 --out "$DEST/fp8_gemm.json"
# the GPU's own properties again, now with shared memory per block (opt-in) and max threads per block
step "$PY" -m helpers hardware --out "$DEST/gpu_properties.json"
echo "fp8.sh: done in $((SECONDS - t0)) s"
