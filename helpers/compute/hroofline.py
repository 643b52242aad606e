"""The hierarchical roofline: one measured bandwidth ceiling per memory level (chapter 28).

A kernel's bytes come from several levels — L1, L2, HBM/DRAM on a GPU; L1d, L2, L3, DRAM on a CPU — and each
level has its own bandwidth. The hierarchical roofline (Yang et al., "Hierarchical Roofline analysis for GPUs",
CCPE 2020) draws one slope per level and places a kernel once per level, at the intensity FLOPs ÷ bytes *of that
level*. This module measures the slopes the way the Empirical Roofline Toolkit does: a **working-set sweep**. One
kernel reads a buffer of S bytes over and over; while S fits in a level, that level serves the reads, so the
bandwidth steps down each time S outgrows a cache. The ceiling of a level is the best rate among the working sets
that sit firmly inside it: S ≤ half its capacity and S ≥ 4 × the level above (STREAM's rule for main memory,
arrays "at least 4 times the size of the available cache", applied to every level).

* GPU (cupy): ``read_sweep`` — each block of a full grid reads a long run of float4s with ``__ldg``, starting at its
  own offset and wrapping around the buffer, so every SM walks the whole buffer: a 32 KiB buffer is re-read from
  each SM's L1, a 16 MiB one from L2, a 2 GiB one from HBM. Bytes counted: the reads (the one guarded store per
  thread never happens). A first version strode through the buffer by the grid's size; each SM then saw only a
  quarter of it, so a 1 MiB buffer was timed as if it were L1 — the working set *per reader* is what counts.
* CPU (numpy, one core): ``out += buf`` repeated in one C loop (``np.add.reduce`` over a stride-0 view), so the
  working set is buf + out = 2S and each pass moves 3S (read buf, read out, write out).

The per-level *bytes of a kernel* come from Nsight Compute's counters (helpers.compute.ncu); on a CPU there are
no such counters here, so the CPU figure shows the ceilings only. The figures are ``helpers.figures.compute``'s
``sweep_figure`` and ``hroofline_figure``.

    python -m helpers hroofline sweep --json [--out FILE]          # this machine's ceilings, GPU path if present
"""
from __future__ import annotations

import argparse
import glob
import math
import os
import sys
from dataclasses import dataclass

import numpy as np

from helpers.core import results, timing

KERNEL = r"""
extern "C" __global__ void read_sweep(const float4* __restrict__ buf, unsigned long long mask,
                                      unsigned long long per_block, float* __restrict__ out) {
    // block b reads per_block float4s from its own start, wrapping around the buffer (mask = n - 1): each
    // block, so each SM, walks the whole buffer, and the working set one SM sees is the buffer itself
    const unsigned long long base = blockIdx.x * per_block;
    float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
    #pragma unroll 4
    for (unsigned long long k = threadIdx.x; k < per_block; k += blockDim.x) {
        float4 v = __ldg(&buf[(base + k) & mask]);
        a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
    }
    float s = a.x + a.y + a.z + a.w;
    if (s == -1.0f) out[0] = s;          // never true for a buffer of ones; keeps the loads alive
}
"""


@dataclass(frozen=True)
class Level:
    name: str                  # "L1", "L2", "HBM" / "L1d", "L2", "L3", "DRAM"
    capacity_bytes: int        # per SM (GPU L1) or per core (CPU L1d/L2) — what one reader sees
    source: str                # where the capacity was read


@dataclass(frozen=True)
class SweepPoint:
    device: str
    backend: str               # "cupy" (GPU) or "numpy" (CPU, one core)
    working_set_bytes: int
    bytes_moved: int           # per timed call
    time_s: float              # minimum over the repeats
    bw_GBps: float
    level: str                 # the level the working set sits firmly inside, or "" between two levels


@dataclass(frozen=True)
class Ceiling:
    device: str
    level: str
    bw_GBps: float             # the best point inside the level (the roofline's ceiling: an upper bound)
    min_bw_GBps: float         # the worst point inside it: how flat the plateau is
    capacity_bytes: int
    n_points: int
    working_set_bytes: int     # of the best point


def cpu_levels() -> list[Level]:
    """L1d, L2, L3 of cpu0 from sysfs, then DRAM (unbounded). Instruction caches are skipped."""
    out = []
    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            kind = open(f"{d}/type").read().strip()
            lvl = int(open(f"{d}/level").read())
            size = open(f"{d}/size").read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size[-1:], 1)
        out.append(Level(f"L{lvl}d" if lvl == 1 else f"L{lvl}", int(size.rstrip("KMG")) * mult, f"sysfs {d}"))
    if not out:
        out = [Level("L1d", 32 * 2**10, "assumed (no sysfs)"), Level("L2", 2**20, "assumed (no sysfs)")]
    return sorted(out, key=lambda lv: lv.capacity_bytes) + [Level("DRAM", 2**62, "main memory")]


def gpu_levels(props) -> list[Level]:
    """L1 and L2 from the device's properties, then HBM. On Hopper L1 and shared memory share 256 KB per SM; with
    no shared memory in use L1 gets at least what shared memory could have had, so that is the capacity used."""
    l1 = int(getattr(props, "shared_memory_per_multiprocessor", 0) or 228 * 2**10)
    return [Level("L1", l1, "shared_memory_per_multiprocessor (L1 and shared memory share one array)"),
            Level("L2", int(props.L2_cache_size), "L2_cache_size"),
            Level("HBM", int(props.total_memory), "total_memory")]


def classify(working_set: int, levels: list[Level]) -> str:
    """The level a working set sits firmly inside: ≤ half its capacity and ≥ 4 × the level above; else ''."""
    above = 0
    for lv in levels:
        if working_set <= lv.capacity_bytes // 2:
            return lv.name if working_set >= 4 * above else ""
        if working_set <= lv.capacity_bytes:
            return ""
        above = lv.capacity_bytes
    return ""


def sizes(lo: int, hi: int) -> list[int]:
    """Powers of two from lo to hi bytes."""
    if not 0 < lo <= hi:
        raise ValueError(f"sizes({lo}, {hi}): need 0 < lo <= hi")
    return [2**k for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1)]


def sweep_cpu(working_sets: list[int], levels: list[Level], bytes_per_call: int = 2**27,
              repeats: int = 5) -> list[SweepPoint]:
    """One core: out += buf, repeated in one C loop; the working set is buf + out."""
    pts = []
    for ws in working_sets:
        n = max(ws // 8, 16)                            # buf and out, fp32, ws bytes together
        buf, out = np.ones(n, np.float32), np.zeros(n, np.float32)
        reps = max(1, bytes_per_call // (3 * 4 * n))
        view = np.broadcast_to(buf, (reps, n))          # stride 0 on the outer axis: no copy
        t = timing.time_fn(lambda: np.add.reduce(view, axis=0, out=out), warmup=1, repeats=repeats)
        moved = 3 * 4 * n * reps
        pts.append(SweepPoint("CPU (one core)", "numpy", 8 * n, moved, t.min_s, moved / t.min_s / 1e9,
                              classify(8 * n, levels)))
    return pts


def sweep_gpu(working_sets: list[int], levels: list[Level], min_bytes_per_call: int = 2**31,
              repeats: int = 10, device_name: str = "GPU") -> list[SweepPoint]:
    """cupy read_sweep over each working set; a full grid (8 blocks of 256 threads per SM)."""
    import cupy as cp

    kern = cp.RawKernel(KERNEL, "read_sweep")
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    grid, block = sms * 8, 256
    out = cp.zeros(1, cp.float32)
    pts = []
    for ws in working_sets:
        n_vec = max(ws // 16, 1)
        buf = cp.ones(4 * n_vec, cp.float32)
        want = max(min_bytes_per_call, 16 * n_vec)                   # a big buffer is read whole, once
        per_block = block * max(1, -(-want // (16 * grid * block)))   # whole chunks of 256 float4s
        total = per_block * grid
        call = lambda: kern((grid,), (block,), (buf, np.uint64(n_vec - 1), np.uint64(per_block), out))
        t = timing.time_fn(call, device="cuda", warmup=2, repeats=repeats)
        if out.get()[0] != 0:
            raise RuntimeError("read_sweep: the guard store fired; the buffer was not all ones")
        pts.append(SweepPoint(device_name, "cupy", 16 * n_vec, 16 * total, t.min_s, 16 * total / t.min_s / 1e9,
                              classify(16 * n_vec, levels)))
        del buf
    return pts


def ceilings(points: list[SweepPoint], levels: list[Level]) -> list[Ceiling]:
    """The best bandwidth of the points inside each level (levels with no point inside are left out). Points are
    classified again here, so a recording made under an older rule is read under the current one."""
    out = []
    for lv in levels:
        inside = [p for p in points if classify(p.working_set_bytes, levels) == lv.name]
        if inside:
            best = max(inside, key=lambda p: p.bw_GBps)
            out.append(Ceiling(best.device, lv.name, best.bw_GBps, min(p.bw_GBps for p in inside),
                               lv.capacity_bytes, len(inside), best.working_set_bytes))
    return out


def measure(max_bytes: int | None = None, skipped: list | None = None) -> tuple[list[SweepPoint], list[Level]]:
    """The sweep on this machine: the GPU with cupy when both are there, else one CPU core."""
    from helpers.core.device import pick_device

    dev, _why = pick_device()
    if dev.type == "cuda":
        try:
            import cupy  # noqa: F401
            import torch

            props = torch.cuda.get_device_properties(dev)
            levels = gpu_levels(props)
            hi = max_bytes or min(2**32, props.total_memory // 8)
            return sweep_gpu(sizes(16 * 2**10, hi), levels, device_name=props.name), levels
        except ImportError as e:
            if skipped is not None:
                skipped.append(("gpu sweep", f"cupy is not installed ({e}); the CPU sweep ran instead"))
    levels = cpu_levels()
    return sweep_cpu(sizes(4 * 2**10, max_bytes or 2**28), levels), levels


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli

    ap = argparse.ArgumentParser(prog="python -m helpers hroofline", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["sweep"])
    ap.add_argument("--max-bytes", type=cli.size_bytes(2**12, 2**36), default=None,
                    help="largest working set (default: 256 MiB on a CPU, 4 GiB on a GPU)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    skipped: list = []
    from helpers.core import gpusampler

    with gpusampler.Sampler.for_current() as smp:           # SM clock, power, throttle reasons over the sweep
        pts, levels = measure(a.max_bytes, skipped)
    results.emit(pts, "hroofline-sweep", a, ceilings=[c.__dict__ for c in ceilings(pts, levels)],
                 levels=[lv.__dict__ for lv in levels], gpu_sampler=smp.summary(),
                 skipped=[{"what": w, "reason": r} for w, r in skipped])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
