"""Where a benchmark's limit comes from: the device's name, its datasheet peak and its CPU cache size (chapter 15).

Every benchmark of the suite (``helpers.compute.gemm``, ``membw``, ``hplbench``, ``bench.copy``) reports its rate as a
% of the device's limit. The limit is a datasheet row of ``helpers.core.specs`` looked up by the name torch or NVML
gives the GPU; a CPU has no row, so its peak is None with the reason in the note. ``llc_bytes`` sizes the cache
flush a CPU benchmark needs (read from Linux sysfs).

    name = peaks.device_name(torch.device("cpu"))      # "CPU: <model>"
    peaks.peak("NVIDIA H200", "bf16")                   # (989.4, "H200 SXM datasheet dense bf16 (…)")
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import torch

from helpers.core import specs


def device_name(dev: torch.device) -> str:
    """The name the records carry: torch's GPU name (what ``specs.lookup`` matches), or ``"CPU: <model>"``."""
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    from helpers.core.device import detect_cpu
    return f"CPU: {detect_cpu().model}"


def peak(dev_name: str, spec_dtype: str, what: str = "tflops") -> tuple[float | None, str]:
    """(datasheet peak, note) for a device name from torch/NVML; (None, why) when the table has none."""
    if dev_name.startswith("CPU"):
        return None, f"no datasheet peak for {dev_name} in helpers/core/data/gpu_specs.yaml (GPU table)"
    s = specs.lookup(dev_name, warn=False)
    if s is None:
        return None, f"GPU {dev_name!r} is not in helpers/core/data/gpu_specs.yaml: add its datasheet row"
    if what == "hbm_GBps":
        return float(s.hbm_GBps), f"{s.name} datasheet memory bandwidth ({s.source})"
    p = s.peak_tflops(spec_dtype)
    if p is None:
        return None, f"{s.name} datasheet gives no dense {spec_dtype} figure"
    return float(p), f"{s.name} datasheet dense {spec_dtype} ({s.source})"


def llc_bytes() -> int:
    """Size of the CPU's largest cache level from sysfs (Linux); 32 MiB when it cannot be read."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        t = f.read_text().strip()
        mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
        with contextlib.suppress(ValueError):
            sizes.append(int(t.rstrip("KMG")) * mult)
    return max(sizes) if sizes else 32 * 2**20
