"""Read ``nvidia-smi topo -m`` into a connectivity matrix (chapter 02, "How the GPUs are wired").

The matrix says, for each pair of devices, what a transfer between them crosses: ``NV#`` (a bonded set of #
NVLinks), ``PIX``/``PXB`` (one or several PCIe bridges), ``PHB`` (the CPU's PCIe host bridge), ``NODE``
(host bridges within one NUMA node) or ``SYS`` (the inter-socket link). A sample from an 8-GPU DGX H100 ships
with the helpers so readers without GPUs see a real layout: ``sample("dgx-h100")``.

This module imports no other helper.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"

# nvidia-smi's own legend, ordered from fastest to slowest path (NV# is handled separately).
LEGEND = {
    "X": "self",
    "NV": "a bonded set of NVLinks (NV18 = 18 links)",
    "PIX": "at most one PCIe bridge",
    "PXB": "several PCIe bridges, not the host bridge",
    "PHB": "PCIe and a PCIe host bridge (typically the CPU)",
    "NODE": "PCIe and the link between host bridges within one NUMA node",
    "SYS": "PCIe and the inter-socket link between NUMA nodes (QPI/UPI/xGMI)",
}
_RANK = {"X": 0, "NV": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6}


@dataclass(frozen=True)
class Topology:
    devices: tuple[str, ...]                 # row/column labels, e.g. ("GPU0", …, "NIC0", …)
    matrix: tuple[tuple[str, ...], ...]      # matrix[i][j] = path between devices[i] and devices[j]
    cpu_affinity: tuple[str | None, ...]     # per device (GPUs only)
    numa_affinity: tuple[str | None, ...]
    nic_names: tuple[tuple[str, str], ...] = ()  # ("NIC0", "mlx5_0"), …

    @property
    def gpus(self) -> tuple[str, ...]:
        return tuple(d for d in self.devices if d.startswith("GPU"))

    def link(self, a: str, b: str) -> str:
        return self.matrix[self.devices.index(a)][self.devices.index(b)]


def link_class(cell: str) -> str:
    """``"NV18"`` → ``"NV"``; other cells unchanged (``"X"``, ``"PIX"``, …)."""
    cell = cell.strip()
    return "NV" if cell.startswith("NV") else cell


def nvlinks(cell: str) -> int:
    """Number of bonded NVLinks in a cell (0 when the path is PCIe or self)."""
    cell = cell.strip()
    return int(cell[2:]) if cell.startswith("NV") and cell[2:].isdigit() else 0


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse_topo_matrix(text: str) -> Topology | None:
    """Parse the tab-separated matrix ``nvidia-smi topo -m`` prints; None if there is none in ``text``.

    On a terminal nvidia-smi underlines the header with ANSI escapes; they are stripped first."""
    text = _ANSI.sub("", text)
    lines = [ln.rstrip("\n") for ln in text.splitlines() if not ln.startswith("#")]
    head_i = next((i for i, ln in enumerate(lines) if "\t" in ln and ln.split("\t")[1:2]
                   and ln.split("\t")[1].strip().startswith("GPU")), None)
    if head_i is None:
        return None
    header = [c.strip() for c in lines[head_i].split("\t")]
    n = sum(1 for c in header if c.startswith(("GPU", "NIC", "mlx")) and c != "GPU NUMA ID")
    devices, rows, cpu, numa = [], [], [], []
    for ln in lines[head_i + 1:]:
        if not ln.strip():
            break
        cells = ln.split("\t")
        devices.append(cells[0].strip())
        rows.append(tuple(c.strip() for c in cells[1:1 + n]))
        extra = [c.strip() for c in cells[1 + n:]]
        cpu.append(extra[0] if extra and extra[0] else None)
        numa.append(extra[1] if len(extra) > 1 and extra[1] else None)
    nics = []
    for ln in lines:
        s = ln.strip()
        if s.startswith("NIC") and ":" in s and "\t" not in ln:
            k, v = s.split(":", 1)
            if k.strip()[3:].isdigit():
                nics.append((k.strip(), v.strip()))
    if len(devices) != n or any(len(r) != n for r in rows):
        raise ValueError(f"nvidia-smi topo -m: expected a {n}×{n} matrix, got {len(devices)} rows; "
                         "pass the command's whole output")
    return Topology(tuple(devices), tuple(rows), tuple(cpu), tuple(numa), tuple(nics))


def sample(name: str = "dgx-h100") -> Topology:
    """A shipped topology sample; ``name`` is the file stem under ``helpers/data/topo-<name>.txt``."""
    path = DATA / f"topo-{name}.txt"
    if not path.exists():
        known = sorted(p.stem.removeprefix("topo-") for p in DATA.glob("topo-*.txt"))
        raise FileNotFoundError(f"no topology sample {name!r}; known samples: {known}")
    topo = parse_topo_matrix(path.read_text())
    assert topo is not None, path
    return topo


def sample_text(name: str = "dgx-h100") -> str:
    return (DATA / f"topo-{name}.txt").read_text()


def gpu_link_counts(topo: Topology) -> dict[str, int]:
    """How many GPU pairs use each link class (NV, PIX, …, SYS): the matrix in one line."""
    g = topo.gpus
    counts: dict[str, int] = {}
    for i, a in enumerate(g):
        for b in g[i + 1:]:
            c = link_class(topo.link(a, b))
            counts[c] = counts.get(c, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: _RANK.get(kv[0], 9)))


def nearest_nic(topo: Topology, gpu: str) -> tuple[str, str]:
    """The NIC with the shortest PCIe path to ``gpu`` (what NCCL picks for GPUDirect RDMA)."""
    nics = [d for d in topo.devices if d.startswith("NIC")]
    if not nics:
        raise ValueError("this topology lists no NICs")
    best = min(nics, key=lambda n: _RANK.get(link_class(topo.link(gpu, n)), 9))
    return best, topo.link(gpu, best)


def format_matrix(topo: Topology) -> str:
    w = max(len(d) for d in topo.devices) + 1
    out = [" " * w + "".join(d.rjust(w) for d in topo.devices)]
    for d, row in zip(topo.devices, topo.matrix):
        out.append(d.ljust(w) + "".join(c.rjust(w) for c in row))
    return "\n".join(out)
