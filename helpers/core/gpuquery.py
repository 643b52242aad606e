"""The GPU sources ``helpers.core.device`` asks after NVML (``nvmlquery``): torch.cuda, ``nvidia-smi`` and cupy.

Taught in chapter 01 (GPU cluster overview). Each function answers what its source knows as plain dicts and says
why when the source is absent or broken — torch not installed or a CPU build, ``nvidia-smi`` missing, hanging
(killed after ``$BOOK_TOOL_TIMEOUT_S`` seconds, default 10), failing or printing non-UTF-8, cupy without a GPU —
so that ``device.detect`` can merge the answers field by field and never raise. Imports no other helper.
"""
from __future__ import annotations

import os
import shutil
import subprocess


def torch_info(torch_mod):
    """(torch_version, torch_cuda, nccl_version, gpus as dicts, why no GPU)."""
    torch = torch_mod
    if torch is None:
        try:
            import torch  # noqa: F811
        except ImportError:
            return None, None, None, [], "torch not installed"
        except Exception as e:                   # e.g. a broken pynvml, which torch.cuda imports itself
            return None, None, None, [], f"torch failed to import ({type(e).__name__}: {str(e)[:120]})"
    version = str(torch.__version__)
    cuda = getattr(torch.version, "cuda", None)
    nccl = None
    try:
        if cuda and torch.cuda.is_available():
            v = torch.cuda.nccl.version()
            nccl = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception:
        nccl = None
    if not cuda:
        return version, None, None, [], f"torch {version} is a CPU build"
    if not torch.cuda.is_available():
        return version, cuda, nccl, [], f"torch {version} built for CUDA {cuda} but sees no GPU"
    gpus = []
    try:
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            gpus.append({"index": i, "name": p.name, "compute_capability": f"{p.major}.{p.minor}",
                         "sm_count": int(p.multi_processor_count), "memory_total_bytes": int(p.total_memory)})
    except Exception as e:                       # a GPU that fails mid-query (Xid, fallen off the bus)
        return version, cuda, nccl, gpus, f"torch's GPU query failed ({type(e).__name__}: {str(e)[:120]})"
    return version, cuda, nccl, gpus, None


SMI_FIELDS = ["index", "name", "memory.total", "driver_version", "compute_cap", "clocks.max.sm",
              "clocks.max.mem", "power.limit", "mig.mode.current", "pci.bus_id"]


def run_tool(cmd: list[str], timeout: float | None = None) -> tuple[str | None, str]:
    """Run a diagnostic tool (nvidia-smi …): (stdout, "") or (None, what actually happened). A tool that hangs is
    killed after ``timeout`` seconds (default 10, or ``$BOOK_TOOL_TIMEOUT_S``); output that is not UTF-8 is decoded
    with replacement, never raised."""
    if timeout is None:
        timeout = float(os.environ.get("BOOK_TOOL_TIMEOUT_S", "10"))
    if shutil.which(cmd[0]) is None:
        return None, f"{cmd[0]} not on PATH"
    try:
        out = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"{cmd[0]} did not answer within {timeout:.0f} s (killed)"
    except OSError as e:
        return None, f"{cmd[0]} could not run ({e.strerror or type(e).__name__})"
    stdout = out.stdout.decode("utf-8", errors="replace")
    if out.returncode != 0:
        first = (out.stderr.decode("utf-8", errors="replace").strip() or stdout.strip()).splitlines()[:1]
        return None, f"{cmd[0]} failed (exit {out.returncode}{': ' + first[0][:160] if first else ''})"
    return stdout, ""


def parse_smi_csv(text: str) -> list[dict]:
    """Parse ``nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits``."""
    gpus = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(SMI_FIELDS):
            continue
        raw = dict(zip(SMI_FIELDS, cells))

        def num(key, conv=float):
            v = raw[key]
            try:
                return conv(float(v))
            except ValueError:  # "[N/A]", "[Not Supported]"
                return None

        g = {"index": int(raw["index"]), "name": raw["name"], "driver_version": raw["driver_version"],
             "compute_capability": raw["compute_cap"] if raw["compute_cap"][:1].isdigit() else None,
             "memory_total_bytes": (num("memory.total") or 0) * 2**20 or None,
             "clock_sm_max_MHz": num("clocks.max.sm", int), "clock_mem_max_MHz": num("clocks.max.mem", int),
             "power_limit_W": num("power.limit"),
             "mig_mode": raw["mig.mode.current"].lower() if raw["mig.mode.current"][:1] in "EeDd" else None,
             "pci_bus_id": raw["pci.bus_id"]}
        if g["memory_total_bytes"] is not None:
            g["memory_total_bytes"] = int(g["memory_total_bytes"])
        gpus.append(g)
    return gpus


def smi_gpus() -> tuple[list[dict] | None, str]:
    out, why = run_tool(["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"])
    return (None, why) if out is None else (parse_smi_csv(out), "")


def cupy_status() -> str:
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "not installed (GPU-only package; the helpers fall back to numpy)"
    except Exception as e:
        return f"not usable: {type(e).__name__}"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return f"cupy {cupy.__version__} installed but no usable GPU ({type(e).__name__})"
    return f"cupy {cupy.__version__} ({n} GPU{'s' if n != 1 else ''})"
