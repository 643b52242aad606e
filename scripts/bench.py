"""`make bench`: speed checks of the helpers against plain library calls, measured in the same run.

    python scripts/bench.py            # ~15 s on a 2-core CPU; ~30 s on one GPU

Prints ratios (1.00 = the helper's method costs nothing):
* GEMM: helpers.compute.gemm's MAMF rate (torch.mm(A, B.T, out=C), cache flushed) ÷ plain torch.matmul of the same
  shapes — the target on a GPU is ≥ 0.97 (bf16);
* STREAM: the best torch kernel ÷ the best numpy (CPU) or cupy (GPU) kernel — torch's fused triad vs the others;
* copies (GPU only): pinned ÷ pageable host→device bandwidth.
Unit tests check correctness; this script only reports speed, and exits non-zero when a GPU target is missed.
"""
from __future__ import annotations

import sys
import time

from helpers.compute import bench, gemm, membw
from helpers.core.device import pick_device


def main() -> int:
    dev, why = pick_device()
    print(f"# make bench · {why} · {bench.cpu_threads()}")
    gpu = dev.type == "cuda"
    t0 = time.perf_counter()
    shapes = None if gpu else ((256, 256, 256), (512, 512, 512))
    dtypes = ("bf16", "fp16") if gpu else ("fp32", "bf16")
    recs = gemm.measure(dtypes=dtypes, shapes=shapes, budget_s=None if gpu else 0.2)
    ok = True
    for dt in dtypes:
        r = gemm.ratio_to_plain(recs, dt)
        best = gemm.best(recs, dt)
        print(f"GEMM {dt:5s} helpers / plain torch.matmul (best of same shapes): {r:.3f}"
              f"   ({best.tflops:.4g} TFLOP/s at {best.shape})")
        if gpu and dt == "bf16" and r < 0.97:
            ok = False
            print("  below the 0.97 target: the flush or out= costs time — check helpers.compute.gemm")
    other = "cupy" if gpu else "numpy"
    skipped: list = []
    mb = membw.measure(backends=("torch", other), levels=("memory",), repeats=5 if not gpu else 20,
                       skipped=skipped)
    a = max((r.bw_GBps for r in mb if r.backend == "torch"), default=None)
    b = max((r.bw_GBps for r in mb if r.backend == other), default=None)
    if a and b:
        print(f"STREAM best torch / best {other}: {a / b:.3f}   ({a:.4g} vs {b:.4g} GB/s)")
    for what, reason in skipped:
        print(f"STREAM {what}: skipped ({reason})")
    if gpu:
        cp = bench.copy(sizes_bytes=(2**28,), repeats=10)
        pin = max(r.best_bw_GBps for r in cp if r.pinned and r.direction == "h2d")
        page = max(r.best_bw_GBps for r in cp if not r.pinned and r.direction == "h2d")
        print(f"copy h2d pinned / pageable: {pin / page:.2f}   ({pin:.1f} vs {page:.1f} GB/s)")
    print(f"# {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
