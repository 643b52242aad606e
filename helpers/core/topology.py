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


_DEV = re.compile(r"^(GPU[0-9]+|NIC[0-9]+|mlx[0-9]+_(?:bond_)?[0-9]+|hfi[0-9]+_[0-9]+)$")
_CELL = re.compile(r"^(X|NV[0-9]+|PIX|PXB|PHB|NODE|SYS|SOC|N/A)$")


def parse_topo_matrix(text: str) -> Topology | None:
    """Parse the matrix ``nvidia-smi topo -m`` prints — tab-separated as the tool writes it, or space-aligned as it
    appears once pasted into an issue, a doc or a log; with or without the NIC legend.

    Returns None only when ``text`` holds no matrix at all (no ``GPU0`` header and no matrix row). A header without
    rows, rows without a header, or a cut-off matrix raise ``ValueError`` saying what was found. On a terminal
    nvidia-smi underlines the header with ANSI escapes; they are stripped first."""
    text = _ANSI.sub("", text).replace("\r", "")
    lines = [ln.rstrip() for ln in text.splitlines() if not ln.lstrip().startswith(("#", "$"))]
    head_i = next((i for i, ln in enumerate(lines) if ln[:1] in (" ", "\t", "")
                   and ln.split()[:1] and ln.split()[0] in ("GPU0", "GPU")), None)
    rows_at = [i for i, ln in enumerate(lines) if len(ln.split()) > 1 and _DEV.match(ln.split()[0])
               and _CELL.match(ln.split()[1])]
    if head_i is None:
        if not rows_at:
            return None
        raise ValueError(f"nvidia-smi topo -m: matrix rows ({lines[rows_at[0]].split()[0]} …) but no header row "
                         "(\"GPU0 GPU1 … CPU Affinity\"); paste the whole output, the header names the columns")
    header = lines[head_i].split("CPU Affinity")[0].split()
    devices_h = [c for c in header if _DEV.match(c)]
    n = len(devices_h)
    devices, rows, cpu, numa = [], [], [], []
    for ln in lines[head_i + 1:]:
        cells = ln.split()
        if not cells:
            if devices:
                break
            continue
        if not _DEV.match(cells[0]):
            break
        devices.append(cells[0])
        rows.append(tuple(cells[1:1 + n]))
        extra = cells[1 + n:]
        cpu.append(extra[0] if extra and extra[0] != "N/A" else None)
        numa.append(extra[1] if len(extra) > 1 and extra[1] != "N/A" else None)
    nics = []
    for ln in lines:
        m = re.match(r"\s*(NIC[0-9]+)\s*:\s*(\S+)\s*$", ln)
        if m:
            nics.append((m.group(1), m.group(2)))
    if devices != devices_h or any(len(r) != n or not all(_CELL.match(c) for c in r) for r in rows):
        raise ValueError(f"nvidia-smi topo -m: the header names {n} devices ({', '.join(devices_h[:3])} …) but "
                         f"{len(devices)} complete rows follow ({', '.join(devices[-2:]) or 'none'} last); "
                         "the matrix is cut off — pass the command's whole output")
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
