"""Cross-cluster dataset sync with checksums, and how long it takes over a WAN (chapter 17).

Two clusters keep a dataset in step the way rsync or a cloud sync tool does: each side builds a *manifest* (path ->
size, SHA-256), the diff names what to send, the receiver writes each file to a temporary name, verifies its hash and
only then renames it into place, so a corrupted or half-sent file never replaces a good one.

The time model for sending S bytes in F files over a link of B bit/s with round-trip time RTT, using P parallel TCP
streams each limited by its window W (bytes):

    throughput = min(B / 8 * efficiency, P * W / RTT)          (a TCP stream cannot exceed window/RTT)
    time       = S / throughput + F * per_file_s / P            (per-file open/verify/rename cost, spread over streams)
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def manifest(root: str | os.PathLike) -> dict[str, tuple[int, str]]:
    """relative path -> (size_bytes, sha256) for every file under root."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root}: not a folder; give the dataset's root folder")
    return {p.relative_to(root).as_posix(): (p.stat().st_size, sha256_file(p))
            for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass(frozen=True)
class Plan:
    send: tuple[str, ...]          # new or changed at the source
    delete: tuple[str, ...]        # gone at the source
    unchanged: int
    send_bytes: int


def diff(src: dict, dst: dict) -> Plan:
    send = tuple(p for p in src if dst.get(p) != src[p])
    delete = tuple(p for p in dst if p not in src)
    return Plan(send, delete, len(src) - len(send), sum(src[p][0] for p in send))


def apply(plan: Plan, src_root, dst_root, src_manifest: dict, corrupt=None) -> dict[str, str]:
    """Copy ``plan.send`` with verify-then-rename; returns {path: "ok" | "checksum mismatch"}.

    ``corrupt(path, tmp_file)`` (tests and the lab) may damage a file in flight to show that verification catches it."""
    src_root, dst_root = Path(src_root), Path(dst_root)
    status = {}
    for rel in plan.send:
        target = dst_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".sync-")
        os.close(fd)
        try:
            shutil.copyfile(src_root / rel, tmp)
            if corrupt:
                corrupt(rel, tmp)
            if sha256_file(Path(tmp)) != src_manifest[rel][1]:
                status[rel] = "checksum mismatch"
                continue
            os.replace(tmp, target)
            status[rel] = "ok"
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    for rel in plan.delete:
        (dst_root / rel).unlink(missing_ok=True)
    return status


@dataclass(frozen=True)
class Transfer:
    link_Gbps: float
    rtt_ms: float
    streams: int
    size_bytes: float
    files: int
    throughput_GBps: float
    limited_by: str               # "link" or "TCP window"
    time_s: float


def transfer_time(size_bytes: float, link_Gbps: float, rtt_ms: float, streams: int = 1, files: int = 1,
                  window_bytes: float = 16 * 2**20, efficiency: float = 0.9, per_file_s: float = 0.002) -> Transfer:
    """The model of the module docstring; window 16 MiB (a tuned Linux tcp_rmem maximum), 90% protocol efficiency."""
    if min(size_bytes, link_Gbps, streams, files, window_bytes, efficiency) <= 0 or rtt_ms < 0:
        raise ValueError(f"size {size_bytes}, link {link_Gbps} Gb/s, rtt {rtt_ms} ms, streams {streams}: "
                         "all must be positive (rtt may be 0)")
    link = link_Gbps * 1e9 / 8 * efficiency
    window = streams * window_bytes / (rtt_ms / 1e3) if rtt_ms > 0 else float("inf")
    thr = min(link, window)
    t = size_bytes / thr + files * per_file_s / streams
    return Transfer(link_Gbps, rtt_ms, streams, size_bytes, files, thr / 1e9,
                    "link" if link <= window else "TCP window", t)
