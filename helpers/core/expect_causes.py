"""Why a result falls outside its band: causes in order, checked against the record where it can (helpers.core.expect).

A cause the record itself shows (a throttle reason, a low SM clock, a small problem, a MIG slice, direct I/O off …)
comes first and says "seen in the record"; then the usual causes for that metric, most likely first. Knows no wing.
"""
from __future__ import annotations

from typing import Any

THROTTLE_NAMES = ("sw_power_cap", "hw_slowdown", "hw_power_brake", "sw_thermal", "hw_thermal", "sync_boost")

# generic causes per metric family, most likely first (prefix of the metric name → list)
BELOW = {
    "gemm": ["power cap or thermal throttling (nvidia-smi -q -d PERFORMANCE: clocks event reasons)",
             "SM clock well under its maximum (application clocks, a lowered power limit)",
             "too-small or badly aligned shapes (sweep shapes as the MAMF finder does)",
             "another process on the GPU (nvidia-smi --query-compute-apps)", "a MIG slice, not the whole GPU",
             "an old torch/cuBLAS (ml-engineering: software moves MAMF by tens of %)"],
    "hbm": ["arrays too small to hide launch overhead, or a non-vectorised kernel",
            "ECC or memory clock lowered (nvidia-smi -q -d CLOCK,ECC)", "another process on the GPU",
            "power cap or thermal throttling", "a MIG slice, not the whole GPU"],
    "cpu_mem": ["too few threads or cores: one or two cores cannot saturate the DRAM channels",
                "other processes sharing the cores and memory bus", "one memory channel populated, or slow DIMMs",
                "arrays not much larger than the last-level cache, or numpy's two-pass triad"],
    "h2d": ["PCIe link trained below Gen/width (nvidia-smi -q: PCIe Generation / Link Width, current vs max)",
            "host buffer on the far NUMA node (pin the process: numactl --cpunodebind --membind)",
            "pageable rather than pinned memory", "too-small copies (latency-bound under ~64 MiB)",
            "IOMMU / ACS or a virtualised PCIe path"],
    "p2p": ["peer access off, so copies bounce through host memory", "NVLink links down (nvidia-smi nvlink -s)",
            "GPUs on different PCIe root complexes", "too-small copies"],
    "allreduce": ["messages too small (nccl-tests #212: '256M is too small to reach peak bandwidth')",
                  "NVLink links down or a GPU missing from the NVSwitch fabric (nvidia-smi nvlink -s, fabric manager)",
                  "NCCL fell back to a slower transport (NCCL_DEBUG=INFO: P2P/IPC vs SHM vs NET)",
                  "power cap or throttling on one rank (the slowest rank sets the pace)", "another process on a GPU"],
    "nvme": ["one drive where the band is a striped array of several", "buffered I/O or a small queue depth / one job",
             "PCIe link of the drive below its Gen/width", "file system or virtual disk in the path (ext4 on a VM disk)"],
    "llm_train": ["a toy model (too small to fill the GPU: launch- and memory-bound)",
                  "data loader or host stalls (GPU idle between steps)", "communication not overlapped",
                  "activation recomputation (costs time, not counted in MFU)", "power cap or throttling"],
    "llm_decode": ["batch > 1 or KV cache reads not counted in the bound", "kernel launch overhead (no CUDA graphs)",
                   "weights not in the dtype the bound assumes"],
}
ABOVE = {
    "gemm": ["timing without synchronisation (asynchronous launches end before the work)",
             "operands of zeros or constants (less switching power, higher clocks)", "sparse peak counted as dense",
             "wrong FLOP count (2mnk) or dtype"],
    "hbm": ["cache-resident data (arrays under 4 × the L2 cache; STREAM's size rule)",
            "timing without synchronisation", "bytes counted wrong (write-allocate, kernel fusion)"],
    "h2d": ["timing without synchronisation", "both directions added (bidirectional vs unidirectional)"],
    "p2p": ["both directions added (bidirectional vs unidirectional)", "timing without synchronisation"],
    "allreduce": ["NVLS (NVLink SHARP) was on: compare with the nvls band (the busbw factor assumes point-to-point)",
                  "algbw vs busbw: busbw = algbw × 2(n-1)/n", "in-place vs out-of-place rows mixed"],
    "nvme": ["page cache: buffered reads of a file read before (use direct=1)", "compressible or sparse file"],
    "llm_train": ["recomputed FLOPs counted (that is HFU, not MFU)", "peak of the wrong dtype in the denominator"],
    "llm_decode": ["speculative decoding or batch > 1 counted as batch 1", "weights smaller than assumed (quantised)"],
}


def family(metric: str) -> str:
    for key in ("llm_train", "llm_decode", "allreduce", "gemm", "hbm", "h2d", "d2h", "p2p", "nvme"):
        if metric.startswith(key):
            return "h2d" if key == "d2h" else key
    return "gemm"


def _get(r: Any, k: str, default=None):
    return r.get(k, default) if isinstance(r, dict) else getattr(r, k, default)


def seen(metric: str, record: Any, context: dict | None = None) -> list[str]:
    """Causes of a low value that the record (or its document) shows, each ending '(seen in the record)'."""
    if record is None:
        return []
    out, fam, ctx = [], family(metric), context or {}
    thr = [t for t in (_get(record, "throttle_reasons") or []) if t in THROTTLE_NAMES]
    if thr:
        out.append(f"power cap or throttling: throttle_reasons={thr}")
    clk = _get(record, "sm_clock_MHz_median") or _get(record, "mean_sm_clock_MHz")
    top = ctx.get("sm_clock_MHz_max")
    if clk and top and clk < 0.85 * top:
        out.append(f"SM clock {clk:.0f} MHz, well under the {top:.0f} MHz this run reached")
    name = str(_get(record, "device") or ctx.get("gpu") or "")
    if " mig " in f" {name.lower()} ":
        out.append(f"a MIG slice ({name}), not the whole GPU")
    for k in ("pcie_gen_current", "pcie_width_current"):
        cur, mx = _get(record, k), _get(record, k.replace("current", "max"))
        if cur and mx and cur < mx:
            out.append(f"PCIe {k.split('_')[1]} {cur} below its maximum {mx}")
    if _get(record, "other_processes"):
        out.append(f"another process on the GPU: {_get(record, 'other_processes')}")
    m, n, k = (_get(record, x) for x in ("m", "n", "k"))
    if fam == "gemm" and m and n and k and m * n * k < 2**36:
        out.append(f"small problem: {m}×{n}×{k} (under 4096³ multiply-adds)")
    size = _get(record, "size_bytes")
    if fam in ("h2d", "p2p") and size and size < 64 * 2**20:
        out.append(f"small copies: {size / 2**20:.0f} MiB")
    if fam == "allreduce" and size and size < 2**30:
        out.append(f"messages of {size / 2**20:.0f} MiB (peak busbw needs ≥ 1 GiB)")
    params = _get(record, "params")
    if fam == "llm_train" and params and params < 1e9:
        out.append(f"a toy model: {params / 1e6:.1f} M parameters")
    if fam == "nvme":
        if _get(record, "threads") == 1:
            out.append("one thread / one job, queue depth 1")
        if ctx.get("fs_type"):
            out.append(f"one file system ({ctx['fs_type']}) on the host's disk, not a striped NVMe array")
    return [f"{c} (seen in the record)" for c in out]


def causes(metric: str, verdict: str, record: Any = None, context: dict | None = None) -> tuple[str, ...]:
    """Likely causes in order for a 'below' or 'above' verdict; () for 'within'."""
    fam = family(metric)
    if fam == "hbm" and str((context or {}).get("gpu", "")).lower().startswith("cpu"):
        fam = "cpu_mem"
    if verdict == "below":
        generic = BELOW[fam][1:] if fam == "nvme" and str((context or {}).get("gpu", "")).lower().startswith("cpu") \
            else BELOW[fam]                     # the cpu row is one drive already
        return tuple(seen(metric, record, context) + generic)
    if verdict == "above":
        first = []
        if fam == "nvme" and record is not None and (_get(record, "direct") is False or _get(record, "cache") == "warm"):
            first.append("page cache: buffered reads (seen in the record)")
        if fam in ("hbm", "cpu_mem") and _get(record, "level") == "cache":
            first.append("cache-resident data: level=cache (seen in the record)")
        return tuple(first + ABOVE["hbm" if fam == "cpu_mem" else fam])
    return ()
