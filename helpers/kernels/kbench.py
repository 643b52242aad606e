"""The book's own kernels, run and recorded: simulator counts, Triton checks, occupancy, fusion, GPU experiments.

    python -m helpers kernels sim        --json   # numba simulator: sectors per request, bank ways (any machine)
    python -m helpers kernels triton     --json   # Triton add / softmax / matmul vs torch (interpreter on a CPU)
    python -m helpers kernels ptx        --json   # Triton → PTX/SASS for sm_90 with registers (no GPU needed)
    python -m helpers kernels occupancy  --json   # the calculator vs NVIDIA's worked examples (+ driver on a GPU)
    python -m helpers kernels fusion     --json   # eager ops vs torch.compile kernels, bytes
    python -m helpers kernels gpu        --out assets/measurements/h200/kernels_gpu.json      # cupy kernels (GPU)
    python -m helpers kernels launch     --out assets/measurements/h200/kernels_launch.json   # graphs, streams (GPU)

Chapters 10 and 25 show these tables; the GPU subcommands are recorded on the H200 by scripts/record/kernels.sh.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass

from helpers.core import results

COLUMNS = {
    "sim": ["kernel", "array", "space", "op", "requests", "sectors_per_request", "efficiency_pct", "bank_ways_mean"],
    "triton": ["kernel", "shape", "mode", "max_abs_err", "correct", "time_s", "torch_time_s"],
    "ptx": ["kernel", "arch", "registers_per_thread", "shared_bytes", "ptx_lines", "sass_instructions", "global_loads"],
    "occupancy": ["source", "arch", "threads_per_block", "regs_per_thread", "blocks_per_sm", "expected_blocks",
                  "occupancy_pct", "limiter"],
    "fusion": ["function", "shape", "eager_kernels", "eager_bytes", "compiled_kernels", "fused_floor_bytes",
               "eager_time_s", "compiled_time_s"],
    "gpu": ["experiment", "variant", "size", "time_s", "bw_GBps", "pct_of_hbm", "tflops", "rate_per_s", "correct"],
    "launch": None,
}


@dataclass(frozen=True)
class OccupancyRow:
    source: str
    arch: str
    threads_per_block: int
    regs_per_thread: int
    smem_per_block_bytes: int
    blocks_per_sm: int
    expected_blocks: int | None      # from the document (or the CUDA driver, for "driver:" rows)
    occupancy_pct: float
    limiter: str
    agrees: bool


def occupancy_rows() -> list[OccupancyRow]:
    from helpers.kernels import occupancy as occ

    rows = []
    for arch, t, r, smem, blocks, pct, src in occ.DOC_EXAMPLES:
        o = occ.occupancy(arch, t, r, smem)
        rows.append(OccupancyRow(src.split(",")[0], arch, t, r, smem, o.blocks_per_sm, blocks, o.occupancy_pct,
                                 o.limiter, o.blocks_per_sm == blocks and abs(o.occupancy_pct - pct) < 1e-9))
    from helpers.kernels import gpukernels
    for name, threads in (("reduce_vec4", 256), ("transpose_padded", 256), ("matmul_tiled", 256)):
        drv, ours = occ.driver_check(gpukernels.SRC, name, threads)
        if drv is not None:
            rows.append(OccupancyRow(f"driver: {name}", ours.arch, ours.threads_per_block, ours.regs_per_thread,
                                     ours.smem_per_block_bytes, ours.blocks_per_sm, int(drv), ours.occupancy_pct,
                                     ours.limiter, ours.blocks_per_sm == int(drv)))
    return rows


def _sim():
    from helpers.kernels import simt

    runs, stats = [], []
    for k in simt.KERNELS:
        r, st = simt.run(k)
        runs.append(r)
        stats += st
    return stats, {"runs": [dataclasses.asdict(r) for r in runs]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers kernels", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=[*COLUMNS, "ncu-step"])
    ap.add_argument("--step", default="naive", help="ncu-step: the matmul step to run once under Nsight Compute")
    ap.add_argument("--n", type=int, default=4096, help="ncu-step: the matrix size")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    meta: dict = {}
    if a.what == "ncu-step":                 # what `python -m helpers ncu traffic --workloads matmul_*` profiles
        from helpers.kernels import gpukernels
        gpukernels.profile_step(a.step, a.n)
        return 0
    if a.what == "sim":
        recs, meta = _sim()
    elif a.what == "triton":
        from helpers.kernels import tritonk
        recs = tritonk.check_all()
    elif a.what == "ptx":
        from helpers.kernels import tritonk
        recs = [dataclasses.replace(tritonk.compile_for(k, aligned=al), ptx="", sass="")
                for k in ("add", "softmax") for al in (False, True)]
    elif a.what == "occupancy":
        recs = occupancy_rows()
    elif a.what == "fusion":
        from helpers.kernels import fusion
        recs = [fusion.measure(name) for name in fusion.FUNCTIONS]
    elif a.what == "gpu":
        from helpers.core import gpusampler
        from helpers.kernels import gpukernels
        with gpusampler.Sampler.for_current() as smp:                 # SM clock, power, throttle reasons during the run
            recs = gpukernels.memory_experiments() + gpukernels.compute_experiments()
        meta["gpu_sampler"] = smp.summary()
    else:
        from helpers.kernels import gpulaunch
        recs = gpulaunch.graph_vs_eager() + gpulaunch.overlap()
        meta["async_error"] = gpulaunch.async_error()
        try:
            lst = gpulaunch.ptx_sass()
            meta["ptx_sass"] = {**dataclasses.asdict(lst), "ptx": lst.ptx[-4000:], "sass": lst.sass[-6000:]}
        except RuntimeError as e:
            meta["ptx_sass"] = {"note": str(e)}
    results.emit(recs, f"kernels-{a.what}", a, columns=COLUMNS[a.what], **meta)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
