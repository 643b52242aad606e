"""NVML queries for ``helpers.core.device``: each GPU field asked on its own, so one NotSupported never hides the rest.

NVML (the library behind nvidia-smi, reached through the nvidia-ml-py package) is the most trusted source of a
GPU's identity, clocks, power limit, MIG mode, PCIe link and NVLink state; on virtualised GPUs some fields raise
NVMLError_NotSupported, which this module turns into "field: reason" instead of an exception (chapter 01).
Imports no other helper.
"""
from __future__ import annotations

from typing import Any


def load_nvml():
    """Return the initialised pynvml module, or (None, why)."""
    try:
        import pynvml  # provided by the nvidia-ml-py package
    except ImportError:
        return None, "nvidia-ml-py not installed"
    except Exception as e:  # a broken install raises anything on import: report it, never crash the report
        return None, f"nvidia-ml-py failed to import ({type(e).__name__}: {str(e)[:120]})"
    try:
        pynvml.nvmlInit()
    except Exception as e:  # NVMLError_LibraryNotFound, DriverNotLoaded, …
        return None, f"NVML not available ({type(e).__name__})"
    return pynvml, None


def ask(fn, *args):
    """Call one NVML/torch query; return (value, None) or (None, short reason)."""
    try:
        return fn(*args), None
    except Exception as e:
        name = type(e).__name__.replace("NVMLError_", "")
        return None, name or "error"


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def nvml_gpus(nvml) -> tuple[list[dict], dict]:
    sysinfo = {}
    v, _ = ask(nvml.nvmlSystemGetDriverVersion)
    sysinfo["driver_version"] = text(v)
    v, _ = ask(nvml.nvmlSystemGetCudaDriverVersion_v2)
    if v:
        sysinfo["cuda_driver_version"] = f"{v // 1000}.{(v % 1000) // 10}"
    count, why = ask(nvml.nvmlDeviceGetCount)
    gpus = []
    for i in range(count or 0):
        h, why = ask(nvml.nvmlDeviceGetHandleByIndex, i)
        if h is None:
            gpus.append({"index": i, "_unavailable": {"handle": why}})
            continue
        g: dict[str, Any] = {"index": i}
        miss: dict[str, str] = {}

        def put(key, fn, *args, conv=lambda x: x):
            val, err = ask(fn, h, *args)
            if err is None and val is not None:
                g[key] = conv(val)
            else:
                miss[key] = err or "None"

        put("name", nvml.nvmlDeviceGetName, conv=text)
        put("uuid", nvml.nvmlDeviceGetUUID, conv=text)
        put("compute_capability", nvml.nvmlDeviceGetCudaComputeCapability, conv=lambda t: f"{t[0]}.{t[1]}")
        put("memory_total_bytes", nvml.nvmlDeviceGetMemoryInfo, conv=lambda m: int(m.total))
        put("clock_sm_max_MHz", nvml.nvmlDeviceGetMaxClockInfo, nvml.NVML_CLOCK_SM, conv=int)
        put("clock_mem_max_MHz", nvml.nvmlDeviceGetMaxClockInfo, nvml.NVML_CLOCK_MEM, conv=int)
        put("power_limit_W", nvml.nvmlDeviceGetPowerManagementLimit, conv=lambda mw: mw / 1000.0)
        put("mig_mode", nvml.nvmlDeviceGetMigMode, conv=lambda t: "enabled" if t[0] else "disabled")
        put("pci_bus_id", nvml.nvmlDeviceGetPciInfo, conv=lambda p: text(p.busId))
        put("pcie_gen", nvml.nvmlDeviceGetCurrPcieLinkGeneration, conv=int)
        put("pcie_width", nvml.nvmlDeviceGetCurrPcieLinkWidth, conv=int)
        active, links_err = 0, None
        for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
            state, err = ask(nvml.nvmlDeviceGetNvLinkState, h, link)
            if err is not None:
                links_err = err
                break
            active += int(bool(state))
        if active or links_err in (None, "InvalidArgument"):
            g["nvlink_links_active"] = active
        else:
            miss["nvlink_links_active"] = links_err
        g["_unavailable"] = miss
        gpus.append(g)
    return gpus, sysinfo
