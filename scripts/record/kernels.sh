#!/usr/bin/env bash
# Reference results for chapters 10 and 25 (issue 11), recorded on the H200; about 2–3 minutes in all.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/kernels.sh
# Needs on the GPU machine: torch (CUDA), cupy-cuda13x, nvidia-ml-py, triton; nvcc + cuobjdump for the PTX/SASS listing.
# Every file is written by a helpers CLI with --out, so it carries its provenance; GEMM records carry the SM clock,
# power and throttle reasons that NVML sampled while each one ran.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# correctness first: every cupy STREAM kernel against numpy (n % 4 != 0 exercises the scalar tail)
"$PY" -c "from helpers.compute import streamkernels as sk; e = sk.verify_cupy(); print(e); assert max(e.values()) < 1e-5, e"
# ch15/ch10: STREAM, torch vs the cupy kernels on the same arrays (records carry ratio_to_torch)
step "$PY" -m helpers bench membw --out "$DEST/membw.json"
# ch10: GEMM ceiling, MAMF-style and sustained back to back, over a MAMF-like shape sweep, bf16 and fp8
step "$PY" -m helpers bench gemm --sweep --dtypes bf16,fp8 --out "$DEST/gemm_sweep.json"
# ch10/ch25: the book's cupy kernels: coalescing, bank conflicts, divergence, atomics, reduction stages, matmul
step "$PY" -m helpers kernels gpu --out "$DEST/kernels_gpu.json"
# ch10: Nsight Compute counters (time, L1/L2/HBM bytes) of the five matmul steps at 4096³
step "$PY" -m helpers ncu traffic --workloads matmul_naive_fp32,matmul_tiled_fp32,matmul_cublas_fp32,matmul_triton_bf16,matmul_cublas_bf16 --out "$DEST/ncu_matmul.json"
# ch25: CUDA Graph vs eager, copy/compute overlap on streams (profiler timeline), async error, PTX/SASS (nvcc)
step "$PY" -m helpers kernels launch --out "$DEST/kernels_launch.json"
# ch10: Triton kernels compiled for the GPU vs torch; ch25: occupancy calculator vs the CUDA driver
step "$PY" -m helpers kernels triton --out "$DEST/kernels_triton.json"
step "$PY" -m helpers kernels occupancy --out "$DEST/kernels_occupancy.json"
# ch10: torch.compile fusion on the GPU (Inductor generates Triton kernels there)
step "$PY" -m helpers kernels fusion --out "$DEST/kernels_fusion.json"

# The acceptance checks of issue 11, printed for the lead's log (a miss is reported, not hidden).
"$PY" - "$DEST" <<'PYEOF'
import json, sys
d = sys.argv[1]
mem = json.load(open(f"{d}/membw.json"))
for r in mem["records"]:
    if r["backend"] == "cupy":
        flag = "ok" if r["ratio_to_torch"] >= 0.95 else "BELOW 0.95"
        print(f"  cupy {r['op']:5s} {r['bw_GBps']:8.0f} GB/s = {r['ratio_to_torch']:.3f} x torch  {flag}")
g = json.load(open(f"{d}/gemm_sweep.json"))
for dt, target in (("bf16", 830), ("fp8", 1450)):
    for method in ("mamf", "sustained"):
        rs = [r for r in g["records"] if r["dtype"] == dt and r["method"] == method]
        if rs:
            b = max(rs, key=lambda r: r["tflops"])
            tgt = f"  target {target}: {'met' if b['tflops'] >= target else 'missed'}" if method == "mamf" else ""
            print(f"  {dt} {method:9s} {b['tflops']:7.1f} TFLOP/s at {b['shape']}, SM {b['sm_clock_MHz_median']} MHz, "
                  f"{b['power_W_median']} W, {b['throttle_reasons']}{tgt}")
PYEOF
echo "kernels.sh: done in $((SECONDS - t0)) s"
