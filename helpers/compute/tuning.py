"""Node tuning, read only: what the CPU, memory, interrupts and GPU driver are set to, next to what a GPU node wants
(chapter 15, seed 000 §9 "CPU 与内存优化 / 操作系统与驱动优化").

    python -m helpers tuning                 # the table: setting, value here, recommended, why, source
    python -m helpers tuning --json --out tuning.json

Nothing is ever changed: every value is read from ``/sys``, ``/proc`` and ``nvidia-smi -q``. A file a virtual
machine or container does not expose (no ``cpufreq`` on most VMs) gives "not exposed here", never an error. The
``root`` argument points every read at another tree, so tests run the same code on a copy of a real node's files.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass

from helpers.core import results, smiparse

NOT_EXPOSED = "not exposed here"

KERNEL_CPUFREQ = "https://docs.kernel.org/admin-guide/pm/cpufreq.html"
KERNEL_NUMA = "https://docs.kernel.org/admin-guide/mm/numa_memory_policy.html"
KERNEL_THP = "https://docs.kernel.org/admin-guide/mm/transhuge.html"
KERNEL_IRQ = "https://docs.kernel.org/core-api/irq/irq-affinity.html"
NV_PERSIST = "https://docs.nvidia.com/deploy/driver-persistence/index.html"
NV_SMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"


@dataclass(frozen=True)
class Setting:
    setting: str
    value_here: str          # as read on this machine, or NOT_EXPOSED
    recommended: str         # for a dedicated GPU training node
    why: str
    source: str              # URL of the document that describes the setting


def read(path: str, root: str = "/") -> str | None:
    """The stripped text of ``root/path``, or None where it does not exist or cannot be read."""
    from helpers.core import inputs

    full = os.path.join(root, path.lstrip("/"))
    if not os.path.exists(full):
        return None
    try:                                         # a FIFO, device or folder planted there is refused by name
        return inputs.read_text(full, what=f"{path} under --root", max_bytes=16 * 2**20).strip()
    except PermissionError:
        return None


def selected(text: str | None) -> str | None:
    """The bracketed choice of a sysfs multiple-choice file: "always [madvise] never" -> "madvise"."""
    if text is None:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text


def governors(root: str = "/") -> dict[str, int]:
    """Governor -> number of CPUs using it (empty where cpufreq is not exposed)."""
    base = os.path.join(root, "sys/devices/system/cpu")
    out: dict[str, int] = {}
    try:
        cpus = sorted(d for d in os.listdir(base) if d.startswith("cpu") and d[3:].isdigit())
    except OSError:
        return out
    for cpu in cpus:
        g = read(f"sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor", root)
        if g is not None:
            out[g] = out.get(g, 0) + 1
    return out


def numa_nodes(root: str = "/") -> list[dict]:
    """One dict per NUMA node: its CPU list and its memory (MemTotal of the node's meminfo, in kB)."""
    base = os.path.join(root, "sys/devices/system/node")
    try:
        nodes = sorted((d for d in os.listdir(base) if d.startswith("node") and d[4:].isdigit()),
                       key=lambda d: int(d[4:]))
    except OSError:
        return []
    out = []
    for n in nodes:
        mem_kB = None
        for line in (read(f"sys/devices/system/node/{n}/meminfo", root) or "").splitlines():
            if "MemTotal:" in line:
                mem_kB = int(line.split("MemTotal:")[1].split()[0])
        out.append({"node": int(n[4:]), "cpus": read(f"sys/devices/system/node/{n}/cpulist", root),
                    "mem_total_kB": mem_kB})
    return out


def busiest_irqs(root: str = "/", top: int = 5) -> list[dict]:
    """The ``top`` interrupts of ``/proc/interrupts`` by total count, with the CPUs each may run on."""
    text = read("proc/interrupts", root)
    if not text:
        return []
    lines = text.splitlines()
    ncpu = len(lines[0].split())
    rows = []
    for ln in lines[1:]:
        name, sep, rest = ln.partition(":")
        if not sep or not name.strip().isdigit():
            continue                          # NMI, LOC, … are per-CPU counters, not routable IRQs
        parts = rest.split()
        counts = [int(p) for p in parts[:ncpu] if p.isdigit()]
        rows.append({"irq": int(name), "total": sum(counts), "per_cpu": counts,
                     "device": " ".join(parts[ncpu:]),
                     "affinity": read(f"proc/irq/{name.strip()}/smp_affinity_list", root) or NOT_EXPOSED})
    rows.sort(key=lambda r: -r["total"])
    return rows[:top]


def gpu_driver(smi_text: str | None) -> list[dict]:
    """Persistence mode and application clocks per GPU, as ``nvidia-smi -q`` reports them ([] without text)."""
    if not smi_text:
        return []
    q = smiparse.parse_query(smi_text)
    out = []
    for g in q.gpus:
        f = g.fields
        out.append({"bus_id": g.bus_id, "name": g.name, "persistence": f.get("Persistence Mode"),
                    "app_graphics": f.get("Applications Clocks/Graphics"),
                    "app_memory": f.get("Applications Clocks/Memory"),
                    "default_app_graphics": f.get("Default Applications Clocks/Graphics"),
                    "max_graphics": f.get("Max Clocks/Graphics")})
    return out


def smi_query(timeout_s: float = 30.0) -> str | None:
    """``nvidia-smi -q`` text, or None where nvidia-smi is absent or fails (a CPU machine)."""
    if shutil.which("nvidia-smi") is None:
        return None
    from helpers.core import inputs

    try:
        p = inputs.run_program(["nvidia-smi", "-q"], timeout_s=timeout_s)
    except (OSError, inputs.ProgramFailed) as e:
        print(f"note: nvidia-smi -q gave nothing: {e}", file=sys.stderr)
        return None
    return p.stdout if p.returncode == 0 else None


def report(root: str = "/", smi_text: str | None = None, top_irqs: int = 3) -> list[Setting]:
    """The tuning table of this node (or of the tree under ``root``), read only."""
    gov = governors(root)
    nodes = numa_nodes(root)
    rows = [
        Setting("CPU frequency governor",
                ", ".join(f"{g} ({n} CPUs)" for g, n in gov.items()) or NOT_EXPOSED, "performance",
                "keeps cores at full clock, so the data loader and kernel launches never wait for a ramp-up",
                KERNEL_CPUFREQ),
        Setting("NUMA nodes",
                "; ".join(f"node{n['node']}: CPUs {n['cpus']}, "
                          + (f"{n['mem_total_kB'] / 2**20:.1f} GiB" if n['mem_total_kB'] else "memory ?")
                          for n in nodes) or NOT_EXPOSED,
                "each rank bound to the node of its GPU and NIC (numactl --cpunodebind=N --membind=N)",
                "a remote-node buffer crosses the socket link on every host-device copy",
                KERNEL_NUMA),
        Setting("Transparent huge pages",
                selected(read("sys/kernel/mm/transparent_hugepage/enabled", root)) or NOT_EXPOSED,
                "madvise (or always, after measuring)",
                "2 MiB pages cut TLB misses on large host buffers; 'always' can stall on compaction",
                KERNEL_THP),
        Setting("THP defrag",
                selected(read("sys/kernel/mm/transparent_hugepage/defrag", root)) or NOT_EXPOSED,
                "madvise or defer",
                "synchronous compaction in a page fault is a latency spike in the training loop",
                KERNEL_THP),
    ]
    for irq in busiest_irqs(root, top_irqs):
        rows.append(Setting(f"IRQ {irq['irq']} affinity ({irq['device'][:40]}, {irq['total']} interrupts)",
                            irq["affinity"], "CPUs of the device's own NUMA node, not the ranks' cores",
                            "a NIC interrupt served on a far or busy core adds latency to every message",
                            KERNEL_IRQ))
    gpus = gpu_driver(smi_text)
    if not gpus:
        rows.append(Setting("GPU persistence mode", NOT_EXPOSED + " (no nvidia-smi)", "Enabled (nvidia-persistenced)",
                            "the driver stays loaded between jobs: no seconds-long init at each CUDA start",
                            NV_PERSIST))
        rows.append(Setting("GPU application clocks", NOT_EXPOSED + " (no nvidia-smi)",
                            "the defaults; lock clocks only for a benchmark, and record it",
                            "a changed clock makes results incomparable with other nodes", NV_SMI))
    for g in gpus:
        rows.append(Setting(f"GPU {g['bus_id']} persistence mode", str(g["persistence"]),
                            "Enabled (nvidia-persistenced)",
                            "the driver stays loaded between jobs: no seconds-long init at each CUDA start",
                            NV_PERSIST))
        rows.append(Setting(f"GPU {g['bus_id']} application clocks",
                            f"{g['app_graphics']} / {g['app_memory']} (default {g['default_app_graphics']}, "
                            f"max {g['max_graphics']})", "the defaults; lock clocks only for a benchmark",
                            "a changed clock makes results incomparable with other nodes", NV_SMI))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m helpers tuning", description=__doc__.splitlines()[0])
    p.add_argument("--root", type=cli_dir, default="/", help="read /sys and /proc under this tree (default /)")
    results.add_output_args(p)
    a = p.parse_args(argv)
    rows = report(a.root, smi_query() if a.root == "/" else None)
    results.emit(rows, "tuning", a, ["setting", "value_here", "recommended", "source"])
    return 0


def cli_dir(text: str) -> str:
    from helpers.core import cli

    return cli.existing_dir(text)


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
