"""What a GPU reports about itself, and the memory hierarchy built from it (chapter 02, hardware selection).

    from helpers.figures import gpuprops
    recs, why = gpuprops.gpu_properties()                # one record per visible GPU (torch, then cupy per field)
    gpuprops.memory_hierarchy(results.to_dict(recs[0]))  # registers, shared memory, L1, L2, HBM of one GPU
    python -m helpers hardware --json [--out FILE]      # the same records from a shell (the tool keeps its name)

A field no source reports (or reports as 0) is None, never a guess; ``memory_hierarchy`` fills what the GPU did not
report from the Hopper whitepaper and names that source in each row. Datasheet peaks, prices and chips are in
``helpers.figures.hardware``.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import results

HOPPER_WHITEPAPER_URL = "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"


@dataclass(frozen=True)
class GPUProperties:
    index: int
    name: str
    sm_count: int | None
    warp_size: int | None
    max_threads_per_sm: int | None
    regs_per_sm: int | None
    shared_mem_per_sm_bytes: int | None
    l2_cache_bytes: int | None
    memory_bus_width_bits: int | None
    memory_clock_MHz: float | None        # as the CUDA runtime reports it (HBM: the DDR base clock)
    total_memory_bytes: int | None
    sources: tuple[str, ...]
    shared_mem_per_block_optin_bytes: int | None = None   # the most one thread block may ask for (opt-in)
    max_threads_per_block: int | None = None


def _positive_int(v):
    try:
        v = int(v)
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def gpu_properties() -> tuple[list[GPUProperties], str | None]:
    """(one record per visible GPU, why there are none). Asks torch, then cupy, for each field on its own."""
    import torch

    if not torch.cuda.is_available():
        return [], "no CUDA GPU visible to torch: these are properties a GPU reports about itself"
    try:
        import cupy
        cp_props = cupy.cuda.runtime.getDeviceProperties
    except Exception:  # cupy is GPU-only and optional: torch alone fills most fields
        cp_props = None
    out = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        t = {"sm_count": getattr(p, "multi_processor_count", None), "warp_size": getattr(p, "warp_size", None),
             "max_threads_per_sm": getattr(p, "max_threads_per_multi_processor", None),
             "shared_mem_per_sm_bytes": getattr(p, "shared_memory_per_multiprocessor", None),
             "l2_cache_bytes": getattr(p, "L2_cache_size", None),
             "memory_bus_width_bits": getattr(p, "memory_bus_width", None),
             "memory_clock_kHz": getattr(p, "memory_clock_rate", None),
             "total_memory_bytes": getattr(p, "total_memory", None),
             "regs_per_sm": getattr(p, "regs_per_multiprocessor", None),
             "shared_mem_per_block_optin_bytes": getattr(p, "shared_memory_per_block_optin", None),
             "max_threads_per_block": getattr(p, "max_threads_per_block", None)}
        src = ["torch"]
        if cp_props is not None:
            try:
                c = cp_props(i)
                alt = {"regs_per_sm": c.get("regsPerMultiprocessor"), "l2_cache_bytes": c.get("l2CacheSize"),
                       "memory_bus_width_bits": c.get("memoryBusWidth"), "memory_clock_kHz": c.get("memoryClockRate"),
                       "shared_mem_per_sm_bytes": c.get("sharedMemPerMultiprocessor"),
                       "shared_mem_per_block_optin_bytes": c.get("sharedMemPerBlockOptin"),
                       "max_threads_per_block": c.get("maxThreadsPerBlock")}
                for k, v in alt.items():
                    if _positive_int(t.get(k)) is None and _positive_int(v) is not None:
                        t[k] = v
                src.append("cupy")
            except Exception:  # a field cupy cannot give stays as torch gave it
                pass
        kHz = _positive_int(t.pop("memory_clock_kHz"))
        out.append(GPUProperties(i, p.name, **{k: _positive_int(v) for k, v in t.items()},
                                 memory_clock_MHz=kHz / 1000 if kHz else None, sources=tuple(src)))
    return out, None


# ---------------------------------------------------------------- the memory hierarchy

# Hopper SM figures from the Hopper whitepaper (H100 SXM5), used only where neither a live GPU nor a recording answers
HOPPER_WHITEPAPER = {"regs_per_sm": 65536, "shared_mem_per_sm_bytes": 228 * 1024,
                     "shared_mem_per_block_optin_bytes": 227 * 1024, "l1_shared_per_sm_bytes": 256 * 1024,
                     "l2_cache_bytes": 50 * 10**6, "sm_count": 132, "source": HOPPER_WHITEPAPER_URL}


@dataclass(frozen=True)
class MemoryLevel:
    level: str
    per: str                       # "thread block", "SM" or "GPU"
    capacity_bytes: int
    gpu_total_bytes: int           # capacity × SMs for per-SM levels
    source: str                    # "live", "recorded" or the whitepaper


def memory_hierarchy(props: dict | None, total_memory_bytes: int | None = None) -> list[MemoryLevel]:
    """Registers, shared memory (per block and per SM), L1+shared, L2 and HBM of one GPU, from the properties it
    reported (``props``: a GPUProperties record as a dict, with ``props_source``) and the whitepaper for the rest."""
    wp, got = HOPPER_WHITEPAPER, dict(props or {})
    src = got.pop("props_source", "reported")

    def pick(key):
        v = got.get(key)
        return (int(v), src) if v else (wp[key], "Hopper whitepaper (H100 SXM5)")
    sms, sms_src = pick("sm_count")
    regs, regs_src = pick("regs_per_sm")
    smem, smem_src = pick("shared_mem_per_sm_bytes")
    blk, blk_src = pick("shared_mem_per_block_optin_bytes")
    l2, l2_src = pick("l2_cache_bytes")
    hbm = total_memory_bytes or got.get("total_memory_bytes")
    rows = [MemoryLevel("registers (32-bit × regs)", "SM", regs * 4, regs * 4 * sms, regs_src),
            MemoryLevel("shared memory, one block (opt-in)", "thread block", blk, blk, blk_src),
            MemoryLevel("shared memory", "SM", smem, smem * sms, smem_src),
            MemoryLevel("L1 + shared memory (one array)", "SM", wp["l1_shared_per_sm_bytes"],
                        wp["l1_shared_per_sm_bytes"] * sms, "Hopper whitepaper (H100 SXM5)"),
            MemoryLevel("L2 cache", "GPU", l2, l2, l2_src)]
    if hbm:
        rows.append(MemoryLevel("HBM", "GPU", int(hbm), int(hbm), src if got.get("total_memory_bytes") else "datasheet"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers hardware", description=__doc__.split("\n")[0])
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs, why = gpu_properties()
    if why:
        print(f"note: {why}", file=sys.stderr)
    results.emit(recs, "gpu_properties", a, reason=why)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
