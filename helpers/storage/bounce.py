"""The bounce-buffer path that GPUDirect Storage replaces, measured and modelled (chapter 23).

    from helpers.storage import bounce
    recs = bounce.measure(tempfile.gettempdir(), 32 * 2**20)      # file → host buffer (→ GPU where there is one)
    disk, h2d = bounce.rates_from_recordings(iobench_doc, transfer_doc)
    bounce.compare(10**10, disk_GBps=disk, h2d_GBps=h2d)          # two hops, serial and overlapped, vs direct

Without GDS a read into GPU memory is two hops: the file's bytes land in a host buffer (page cache, then a
CPU copy into the application's buffer — pinned if it was allocated with ``pin_memory``), and the GPU's copy
engine moves them from there. ``measure`` times each hop on this machine: the read into a plain and, where
CUDA is available, a pinned buffer, and the host → GPU copy. On a machine without a GPU the GPU hop is not run
and the records say so. ``compare`` puts recorded rates into ``helpers.storage.storagepath``'s hop model.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from helpers.core import timing
from helpers.storage import storagepath as sp


@dataclass(frozen=True)
class HopRecord:
    hop: str                    # "file → host buffer" or "host buffer → GPU"
    buffer: str                 # "plain" or "pinned"
    size_bytes: int
    time_s: float | None        # median; None where the hop could not run here
    bw_GBps: float | None
    note: str


def _cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _buffers(size_bytes: int):
    """A plain host buffer, and a pinned one where CUDA is there to pin it (pinning needs the CUDA driver)."""
    import torch

    bufs = [("plain", torch.empty(size_bytes, dtype=torch.uint8), "pageable host memory (torch.empty)")]
    if _cuda() is not None:
        bufs.append(("pinned", torch.empty(size_bytes, dtype=torch.uint8).pin_memory(),
                     "page-locked host memory (Tensor.pin_memory)"))
    return bufs


def measure(directory: str, size_bytes: int = 32 * 2**20, repeats: int = 5) -> list[HopRecord]:
    """Write a ``size_bytes`` file in ``directory``, then time reading it into host buffers (warm page cache:
    the CPU copy page cache → user buffer that GDS skips) and, with a GPU, copying each buffer to the GPU."""
    if size_bytes < 4096:
        raise ValueError(f"size_bytes={size_bytes}: use at least 4096 so a copy is more than a syscall")
    if not os.path.isdir(directory):
        raise ValueError(f"directory {directory!r} does not exist; pass an existing directory, e.g. /tmp")
    fd, path = tempfile.mkstemp(prefix="bounce-", dir=directory)
    out = []
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(size_bytes))
        torch = _cuda()
        for name, buf, why in _buffers(size_bytes):
            view = memoryview(buf.numpy())

            def read(view=view):
                with open(path, "rb", buffering=0) as f:
                    n = f.readinto(view)
                if n != size_bytes:
                    raise OSError(f"short read: {n} of {size_bytes} bytes from {path}")

            t = timing.time_fn(read, warmup=1, repeats=repeats)
            out.append(HopRecord("file → host buffer", name, size_bytes, t.median_s,
                                 size_bytes / t.median_s / 1e9, f"{why}; warm page cache"))
            if torch is None:
                out.append(HopRecord("host buffer → GPU", name, size_bytes, None, None,
                                     "no CUDA GPU here: this hop was not run"))
                continue
            dst = torch.empty(size_bytes, dtype=torch.uint8, device="cuda")
            t = timing.time_fn(lambda: dst.copy_(buf, non_blocking=True), device="cuda", warmup=2, repeats=repeats)
            if not torch.equal(dst[:4096].cpu(), buf[:4096]):
                raise RuntimeError("host → GPU copy returned different bytes")
            out.append(HopRecord("host buffer → GPU", name, size_bytes, t.median_s,
                                 size_bytes / t.median_s / 1e9, f"{why} → {torch.cuda.get_device_name()}"))
    finally:
        os.unlink(path)
    return out


def rates_from_recordings(iobench_doc: dict, transfer_doc: dict | None = None,
                          gpudirect_doc: dict | None = None) -> tuple[float, float]:
    """(disk GB/s, pinned host → GPU GB/s) from recorded documents: the best single-thread ``O_DIRECT``
    sequential read (the access GDS itself makes) and the largest pinned host → device copy."""
    reads = [r for r in iobench_doc["records"] if r["pattern"] == "seq_read" and r.get("direct")]
    if not reads:
        raise ValueError("the iobench recording has no seq_read with direct=True; record with O_DIRECT supported")
    disk = max(r["bw_MBps"] for r in reads) / 1000
    if transfer_doc is not None:
        h2d = [r for r in transfer_doc["records"] if r["direction"] == "h2d" and r["pinned"]]
    elif gpudirect_doc is not None:
        h2d = [r for r in gpudirect_doc["records"] if r["path"] == "pinned memcpy"]
    else:
        raise ValueError("pass transfer_doc or gpudirect_doc for the host → GPU rate")
    if not h2d:
        raise ValueError("no pinned host → device record in the transfer/gpudirect recording")
    return disk, max(h2d, key=lambda r: r["size_bytes"])["bw_GBps"]


@dataclass(frozen=True)
class BounceResult:
    path: str
    time_s: float
    bw_GBps: float
    host_dram_bytes_per_byte: int


def paths(disk_GBps: float, h2d_GBps: float, gpu_link_GBps: float | None = None) -> tuple[sp.StoragePath, ...]:
    """The bounce path (drive → pinned buffer → GPU) and the direct path (drive → GPU) with the given rates.
    The direct hop is limited by the drive and the GPU's link (``gpu_link_GBps``, default ``h2d_GBps``)."""
    link = h2d_GBps if gpu_link_GBps is None else gpu_link_GBps
    return (sp.StoragePath("bounce: drive → pinned buffer → GPU", (
                sp.Hop("NVMe", "pinned buffer", sp.DMA, disk_GBps, "recorded O_DIRECT read"),
                sp.Hop("pinned buffer", "GPU HBM", sp.DMA, h2d_GBps, "recorded pinned H2D copy"))),
            sp.StoragePath("direct (GDS model): drive → GPU", (
                sp.Hop("NVMe", "GPU HBM", sp.DMA, min(disk_GBps, link), "peer-to-peer DMA, modelled"),)))


def compare(size_bytes: int, *, disk_GBps: float, h2d_GBps: float) -> list[BounceResult]:
    """Bounce path one hop after the other (no overlap), the same path overlapped in chunks (the storagepath
    model: slowest hop), and the direct path the model gives GDS."""
    if min(disk_GBps, h2d_GBps) <= 0 or size_bytes <= 0:
        raise ValueError(f"disk_GBps={disk_GBps}, h2d_GBps={h2d_GBps}, size_bytes={size_bytes}: all must be > 0")
    bounce, direct = paths(disk_GBps, h2d_GBps)
    serial = sum(size_bytes / (h.bw_GBps * 1e9) for h in bounce.hops)
    b, d = sp.evaluate(bounce, size_bytes), sp.evaluate(direct, size_bytes)
    return [BounceResult("bounce, two hops in series", round(serial, 4), round(size_bytes / serial / 1e9, 3),
                         b.host_dram_bytes_per_byte),
            BounceResult("bounce, hops overlapped (chunked)", b.time_s, b.effective_GBps, b.host_dram_bytes_per_byte),
            BounceResult("direct path (GDS model)", d.time_s, d.effective_GBps, d.host_dram_bytes_per_byte)]
