"""Storage-to-GPU data paths modelled hop by hop: NVMe, NVMe-oF, GPUDirect Storage, NFS (chapter 23).

    from helpers.storage import storagepath as sp
    paths = sp.standard_paths(memcpy_GBps=sp.measure_memcpy_GBps())
    sp.table(paths, size_bytes=10**10)          # bottleneck GB/s, CPU copies, host-DRAM bytes per byte, time
    iodiagrams.paths_figure(paths)              # the drawing (helpers.figures.iodiagrams)

Every hop is a DMA (a device engine moves the bytes), a CPU copy (a core runs ``memcpy``) or a network hop
(a NIC sends and another receives). A path streams, so its bandwidth is its slowest hop's; what differs
between paths is how many times the bytes cross host DRAM and how many CPU copies they cost — which is what
GPUDirect Storage (GDS) removes: "a direct data path for DMA transfers between GPU memory and storage, which
avoids a bounce buffer through the CPU" (NVIDIA GDS Overview Guide). Link figures come from the PCIe
arithmetic in ``helpers.core.specs`` and the NIC's line rate; CPU-copy speed is measured on the reader's machine.
All inputs are arguments: change them, and the model says what moves.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from helpers.core import specs

DMA, CPU, NET = "DMA", "CPU copy", "network"
HOST = ("page cache", "user buffer", "pinned buffer", "socket buffer")      # nodes that live in host DRAM


@dataclass(frozen=True)
class Hop:
    src: str
    dst: str
    kind: str               # DMA, CPU copy or network
    bw_GBps: float          # 1 GB/s = 1e9 B/s
    link: str               # what limits it, e.g. "PCIe Gen4 x4"

    def host_dram_bytes(self) -> int:
        """Host DRAM bytes touched per payload byte: a CPU copy reads and writes (2), a DMA in or out 1 each."""
        if self.kind == CPU:
            return 2
        return int(self.src in HOST) + int(self.dst in HOST)


@dataclass(frozen=True)
class StoragePath:
    name: str
    hops: tuple[Hop, ...]

    def __post_init__(self):
        for a, b in zip(self.hops, self.hops[1:]):
            if a.dst != b.src:
                raise ValueError(f"path {self.name!r}: hop {a.src}→{a.dst} is followed by {b.src}→{b.dst}")
        for h in self.hops:
            if h.bw_GBps <= 0:
                raise ValueError(f"path {self.name!r}: hop {h.src}→{h.dst} has bw_GBps={h.bw_GBps}; must be > 0")


@dataclass(frozen=True)
class PathResult:
    path: str
    hops: int
    cpu_copies: int
    host_dram_bytes_per_byte: int
    bottleneck: str                 # the slowest hop
    bottleneck_GBps: float
    time_s: float                   # size_bytes / effective bandwidth (streaming: hops overlap)
    effective_GBps: float           # min(bottleneck, host DRAM budget ÷ DRAM bytes per byte)


def evaluate(p: StoragePath, size_bytes: int, host_dram_GBps: float | None = None) -> PathResult:
    """Stream ``size_bytes`` down ``p``. With ``host_dram_GBps`` the host-DRAM traffic is a budget too:
    a path that touches DRAM k times per byte cannot beat host_dram_GBps / k."""
    slow = min(p.hops, key=lambda h: h.bw_GBps)
    dram = sum(h.host_dram_bytes() for h in p.hops)
    eff = slow.bw_GBps
    if host_dram_GBps is not None and dram:
        eff = min(eff, host_dram_GBps / dram)
    return PathResult(p.name, len(p.hops), sum(h.kind == CPU for h in p.hops), dram,
                      f"{slow.src}→{slow.dst} ({slow.link})", round(slow.bw_GBps, 2),
                      round(size_bytes / (eff * 1e9), 4), round(eff, 2))


def measure_memcpy_GBps(size_bytes: int = 64 * 2**20, repeats: int = 5) -> float:
    """One core's large-copy speed on this machine (numpy ``copyto``, best of ``repeats``), in GB/s."""
    import numpy as np

    src = np.ones(size_bytes, dtype=np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return size_bytes / best / 1e9


def standard_paths(*, memcpy_GBps: float, nvme_gen: int = 4, nvme_lanes: int = 4, n_drives: int = 1,
                   gpu_pcie_gen: int = 5, nic_Gbps: float = 400.0) -> list[StoragePath]:
    """Six ways bytes get from a drive to GPU memory, with link bandwidths from the PCIe and NIC arithmetic.

    ``n_drives`` local (or remote) NVMe drives are striped; ``memcpy_GBps`` is one CPU copy stream."""
    if memcpy_GBps <= 0 or n_drives < 1 or nic_Gbps <= 0:
        raise ValueError(f"memcpy_GBps={memcpy_GBps}, n_drives={n_drives}, nic_Gbps={nic_Gbps}: all must be > 0")
    drive = round(specs.pcie_GBps(nvme_gen, nvme_lanes) * n_drives, 2)
    dlink = f"{n_drives}× PCIe Gen{nvme_gen} x{nvme_lanes}"
    gpu = round(specs.pcie_GBps(gpu_pcie_gen, 16), 2)
    glink = f"PCIe Gen{gpu_pcie_gen} x16"
    net = nic_Gbps / 8
    nlink = f"{nic_Gbps:g} Gb/s NIC"
    cpu = f"memcpy, 1 core"
    H = Hop
    return [
        StoragePath("local NVMe, buffered read + pageable cudaMemcpy", (
            H("NVMe", "page cache", DMA, drive, dlink), H("page cache", "user buffer", CPU, memcpy_GBps, cpu),
            H("user buffer", "pinned buffer", CPU, memcpy_GBps, "CUDA driver staging"),
            H("pinned buffer", "GPU HBM", DMA, gpu, glink))),
        StoragePath("local NVMe, O_DIRECT into pinned buffer", (
            H("NVMe", "pinned buffer", DMA, drive, dlink), H("pinned buffer", "GPU HBM", DMA, gpu, glink))),
        StoragePath("local NVMe, GPUDirect Storage", (
            H("NVMe", "GPU HBM", DMA, min(drive, gpu), f"{dlink} peer-to-peer via PCIe switch"),)),
        StoragePath("NVMe-oF (RDMA) into host, then GPU", (
            H("remote NVMe", "target DRAM", DMA, drive, dlink), H("target DRAM", "pinned buffer", NET, net, nlink),
            H("pinned buffer", "GPU HBM", DMA, gpu, glink))),
        StoragePath("NVMe-oF + GPUDirect Storage (RDMA into GPU)", (
            H("remote NVMe", "target DRAM", DMA, drive, dlink), H("target DRAM", "GPU HBM", NET, net,
                                                                     f"{nlink}, GPUDirect RDMA"))),
        StoragePath("NFS over TCP, buffered, then GPU", (
            H("remote NVMe", "target DRAM", DMA, drive, dlink), H("target DRAM", "socket buffer", NET, net, nlink),
            H("socket buffer", "page cache", CPU, memcpy_GBps, cpu), H("page cache", "user buffer", CPU, memcpy_GBps, cpu),
            H("user buffer", "pinned buffer", CPU, memcpy_GBps, "CUDA driver staging"),
            H("pinned buffer", "GPU HBM", DMA, gpu, glink))),
    ]


def table(paths, size_bytes: int, host_dram_GBps: float | None = None):
    """A pandas table of ``evaluate`` for every path."""
    from helpers.core import results

    return results.table([evaluate(p, size_bytes, host_dram_GBps) for p in paths])


def hops_table(p: StoragePath):
    from helpers.core import results

    return results.table(p.hops)


@dataclass(frozen=True)
class PushdownResult:
    where: str              # "filter on host" or "filter near storage"
    bytes_moved: int
    time_s: float


def pushdown(size_bytes: int, selectivity: float, link_GBps: float, storage_scan_GBps: float,
             host_scan_GBps: float) -> list[PushdownResult]:
    """Near-storage compute: scan ``size_bytes`` and keep a ``selectivity`` fraction. On the host, every byte
    crosses the link first; near storage, only the kept bytes do, but the scan runs on the storage side's
    (usually weaker) processor. Both stream, so each time is set by the slower of scan and link."""
    if not 0 <= selectivity <= 1:
        raise ValueError(f"selectivity={selectivity}: must be a fraction in [0, 1]")
    if min(link_GBps, storage_scan_GBps, host_scan_GBps) <= 0:
        raise ValueError("link_GBps, storage_scan_GBps and host_scan_GBps must all be > 0")
    kept = int(size_bytes * selectivity)
    host = max(size_bytes / (link_GBps * 1e9), size_bytes / (host_scan_GBps * 1e9))
    near = max(size_bytes / (storage_scan_GBps * 1e9), kept / (link_GBps * 1e9))
    return [PushdownResult("filter on host", size_bytes, round(host, 4)),
            PushdownResult("filter near storage", kept, round(near, 4))]
