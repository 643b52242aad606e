"""What machine am I on? CPU, memory, GPUs, driver, CUDA, NCCL, cupy and the GPU interconnect.

Taught in chapter 01 (GPU cluster overview); the interconnect matrix in chapter 02.

    python -m helpers device            # a readable report
    python -m helpers device --json     # the same as JSON (``"gpus": []`` and a ``reason`` on CPU)

Each GPU field is asked for on its own, from three sources in order of trust: NVML (nvidia-ml-py, asked by
``nvmlquery``), then torch.cuda, then ``nvidia-smi`` (both asked by ``gpuquery``). On virtualised GPUs NVML raises
NotSupported for some fields; such a field is left ``None``, named in ``unavailable``, and filled from the next
source if that one knows it.
On a machine with no GPU, no driver and no cupy the report is clean: no exception and nothing on stderr.

This module imports only ``core`` helpers. The one place that chooses the compute device is ``pick_device``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.core import cli, gpuquery, records, topology
from helpers.core.nvmlquery import load_nvml as _load_nvml, nvml_gpus as _nvml_gpus


@dataclass(frozen=True)
class CPUInfo:
    model: str
    cores_logical: int
    cores_physical: int | None
    numa_nodes: int
    ram_bytes: int | None


@dataclass(frozen=True)
class GPUInfo:
    index: int
    name: str
    uuid: str | None = None
    compute_capability: str | None = None
    sm_count: int | None = None
    memory_total_bytes: int | None = None
    clock_sm_max_MHz: int | None = None
    clock_mem_max_MHz: int | None = None
    power_limit_W: float | None = None
    mig_mode: str | None = None          # "enabled" / "disabled" / None when unknown or unsupported
    pci_bus_id: str | None = None
    pcie_gen: int | None = None           # current PCIe link generation
    pcie_width: int | None = None         # current PCIe link width (lanes)
    nvlink_links_active: int | None = None
    sources: tuple[str, ...] = ()         # which backends answered ("nvml", "torch", "nvidia-smi")
    unavailable: tuple[str, ...] = ()     # "field: why" for each field no source could give


@dataclass(frozen=True)
class DeviceReport:
    os: str
    python: str
    cpu: CPUInfo
    torch_version: str | None
    torch_cuda: str | None               # CUDA version torch was built with (None for a CPU build)
    driver_version: str | None
    cuda_driver_version: str | None      # newest CUDA the driver supports
    nccl_version: str | None
    cupy: str                            # version, or why it is not usable
    gpus: tuple[GPUInfo, ...]
    reason: str | None                   # why ``gpus`` is empty (None when GPUs were found)
    topology: topology.Topology | None = None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["gpus"] = [dataclasses.asdict(g) for g in self.gpus]
        return d

    def summary(self) -> str:
        """One line: what ran where (used in every lab's output)."""
        if not self.gpus:
            return f"CPU only: {self.cpu.model} ({self.cpu.cores_logical} logical cores); {self.reason}"
        names = sorted({g.name for g in self.gpus})
        return (f"{len(self.gpus)} × {', '.join(names)} · driver {self.driver_version} · "
                f"CUDA (torch) {self.torch_cuda} · NCCL {self.nccl_version}")


# ---------------------------------------------------------------- CPU and host

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def detect_cpu() -> CPUInfo:
    cores_physical = ram = None
    try:
        import psutil

        cores_physical = psutil.cpu_count(logical=False)
        ram = psutil.virtual_memory().total
    except ImportError:
        if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
            ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    nodes = len(list(Path("/sys/devices/system/node").glob("node[0-9]*"))) or 1
    return CPUInfo(_cpu_model(), os.cpu_count() or 1, cores_physical, nodes, ram)


# ---------------------------------------------------------------- the report

_FIELDS = [f.name for f in dataclasses.fields(GPUInfo) if f.name not in ("index", "sources", "unavailable")]


def _merge(sources: list[tuple[str, list[dict]]]) -> tuple[GPUInfo, ...]:
    """Merge per-source GPU dicts by index: the first source that knows a field wins."""
    merged: dict[int, dict] = {}
    for src, gpus in sources:
        for g in gpus:
            m = merged.setdefault(g["index"], {"index": g["index"], "sources": [], "why": {}})
            m["sources"].append(src)
            for k in _FIELDS:
                if m.get(k) is None and g.get(k) is not None:
                    m[k] = g[k]
            for k, why in g.get("_unavailable", {}).items():
                m["why"].setdefault(k, f"{src}: {why}")
    out = []
    for i in sorted(merged):
        m = merged[i]
        missing = tuple(f"{k}: {m['why'].get(k, 'not reported')}" for k in _FIELDS if m.get(k) is None)
        out.append(GPUInfo(index=i, name=m.get("name") or "unknown",
                           **{k: m.get(k) for k in _FIELDS if k != "name"},
                           sources=tuple(m["sources"]), unavailable=missing))
    return tuple(out)


def detect(*, nvml: Any = "auto", torch_mod: Any = None, smi_csv: str | None | bool = "auto",
           topo_text: str | None | bool = "auto") -> DeviceReport:
    """Detect this machine. The keyword arguments exist so tests can inject fake answers:
    ``nvml`` an initialised pynvml-like module (or None for "absent"), ``torch_mod`` a torch-like module,
    ``smi_csv``/``topo_text`` the text nvidia-smi would print (None for "not installed")."""
    notes: list[str] = []
    nvml_why = None
    if nvml == "auto":
        nvml, nvml_why = _load_nvml()
    elif nvml is None:
        nvml_why = "NVML not available"
    nvml_gpus, sysinfo = [], {}
    if nvml is not None:
        try:
            nvml_gpus, sysinfo = _nvml_gpus(nvml)
        except Exception as e:                   # a broken NVML must not break the report: say what happened
            nvml_why = f"NVML query failed ({type(e).__name__}: {str(e)[:120]})"
            notes.append(nvml_why)
    tv, tcuda, nccl, torch_gpus, torch_why = gpuquery.torch_info(torch_mod)
    smi_why = "nvidia-smi not on PATH"
    if smi_csv == "auto":
        smi, smi_why = gpuquery.smi_gpus()
    else:
        smi = gpuquery.parse_smi_csv(smi_csv) if smi_csv else None
    gpus = _merge([("nvml", nvml_gpus), ("torch", torch_gpus), ("nvidia-smi", smi or [])])
    driver = sysinfo.get("driver_version") or (smi[0].get("driver_version") if smi else None)
    reason = None
    if not gpus:
        reason = "no GPU found: " + "; ".join(
            [nvml_why or "NVML reports 0 GPUs", torch_why or "torch sees 0 GPUs",
             smi_why if smi is None else "nvidia-smi lists 0 GPUs"])
    if topo_text == "auto":
        topo_text = gpuquery.run_tool(["nvidia-smi", "topo", "-m"])[0] if gpus else None
    topo = topology.parse_topo_matrix(topo_text) if topo_text else None
    if gpus and topo is None:
        notes.append("interconnect matrix unavailable (nvidia-smi topo -m gave nothing)")
    return DeviceReport(
        os=f"{platform.system()} {platform.release()}", python=platform.python_version(), cpu=detect_cpu(),
        torch_version=tv, torch_cuda=tcuda, driver_version=driver,
        cuda_driver_version=sysinfo.get("cuda_driver_version"), nccl_version=nccl, cupy=gpuquery.cupy_status(),
        gpus=gpus, reason=reason, topology=topo, notes=tuple(notes))


def pick_device(prefer: str | None = None):
    """The one place the book chooses where tensors live. Returns ``(torch.device, reason)``.

    ``prefer`` may be "cpu" or "cuda"; by default CUDA is used when torch can see a GPU."""
    import torch

    if prefer not in (None, "cpu", "cuda"):
        raise ValueError(f"prefer={prefer!r}: use None (auto), 'cpu' or 'cuda'")
    if prefer != "cpu" and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        return torch.device("cuda", 0), f"auto-detected: CUDA, {p.name} (SM {p.major}.{p.minor})"
    if prefer == "cuda":
        raise RuntimeError("prefer='cuda' but torch sees no GPU: run on a GPU machine or pass prefer=None")
    why = "CPU build of torch" if not torch.version.cuda else "torch sees no GPU"
    return torch.device("cpu"), f"CPU ({why}); GPU-only steps are skipped and say so"


def format_report(r: DeviceReport) -> str:
    gib = lambda b: f"{b / 2**30:.1f} GiB" if b else "?"  # noqa: E731
    lines = [f"OS        {r.os} · Python {r.python}",
             f"CPU       {r.cpu.model} · {r.cpu.cores_logical} logical / {r.cpu.cores_physical} physical cores"
             f" · {r.cpu.numa_nodes} NUMA node(s) · RAM {gib(r.cpu.ram_bytes)}",
             f"torch     {r.torch_version} · CUDA build {r.torch_cuda} · NCCL {r.nccl_version}",
             f"driver    {r.driver_version} (supports CUDA {r.cuda_driver_version})",
             f"cupy      {r.cupy}"]
    if not r.gpus:
        lines.append(f"GPUs      none — {r.reason}")
    for g in r.gpus:
        lines.append(f"GPU {g.index}     {g.name} · SM {g.compute_capability} · {g.sm_count} SMs · "
                     f"{gib(g.memory_total_bytes)} · {g.clock_sm_max_MHz} MHz SM max · "
                     f"{g.power_limit_W} W limit · MIG {g.mig_mode} · PCIe gen {g.pcie_gen} x{g.pcie_width}"
                     f" · NVLink links {g.nvlink_links_active}  [{', '.join(g.sources)}]")
        if g.unavailable:
            lines.append(f"          not available: {'; '.join(g.unavailable)}")
    if r.topology is not None:
        lines.append("interconnect (nvidia-smi topo -m):")
        lines.append(topology.format_matrix(r.topology))
    lines += [f"note      {n}" for n in r.notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers device", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--out", metavar="FILE", type=cli.out_file, help="save the report as a measurement document (with provenance)")
    args = ap.parse_args(argv)
    r = detect()
    print(json.dumps(r.to_dict(), indent=2) if args.json else format_report(r))
    if args.out:
        records.save(records.document_of([r.to_dict()], "device", records.provenance_of(r)), args.out)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))


def profile_once(call, warmup: int = 3) -> None:
    """Warm ``call`` up, then run it once between cudaProfilerStart/Stop: what ``ncu --profile-from-start off``
    profiles (used by the ncu tool's workloads and by the kernels tool's matmul steps)."""
    import torch

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
