"""The multi-GPU recordings (``assets/measurements/h200x<N>/``, issue 17) read for chapters 3 and 8.

``scripts/record/multigpu.sh`` writes them on a host with N ≥ 2 GPUs: every collective with NCCL
(``collectives_nccl.json``), the all-reduce with ``NCCL_ALGO`` forced to Ring and to Tree
(``collectives_nccl_ring.json`` / ``_tree.json``) and DDP's bucket sweep with NCCL (``ddp_buckets_nccl.json``).
These functions find what exists and reduce it to the tables the chapters show; when nothing was recorded they say
so (no host with several GPUs was lent), and they never invent a row.
"""
from __future__ import annotations

import re

from helpers.core import measurements

FILES = ("collectives_nccl", "collectives_nccl_ring", "collectives_nccl_tree", "ddp_buckets_nccl")


def hosts() -> list[str]:
    """Recorded multi-GPU hosts, e.g. ["h200x8"], fewest GPUs first."""
    found = {n.split("/")[0] for n in measurements.available() if re.fullmatch(r"h200x\d+/.+", n)}
    return sorted(found, key=lambda h: int(h.removeprefix("h200x")))


def missing_note(file: str) -> str:
    """The honest line for a recording that does not exist."""
    return (f"h200x<N>/{file}: not recorded — no host with several GPUs was lent to the book yet; "
            "scripts/record/multigpu.sh records it there")


def allreduce_largest(host: str) -> list[dict]:
    """All-reduce at the largest recorded size, per world size: time, algbw, busbw, data checked."""
    doc = measurements.load(f"{host}/collectives_nccl")
    ar = [r for r in doc["records"] if r["op"] == "all_reduce"]
    out = []
    for ws in sorted({r["world_size"] for r in ar}):
        big = max((r for r in ar if r["world_size"] == ws), key=lambda r: r["size_bytes"])
        out.append({k: big[k] for k in ("world_size", "size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "correct")})
    return out


def ring_vs_tree(host: str) -> list[dict]:
    """Forced Ring vs forced Tree all-reduce time by size, with which was faster."""
    ring = {r["size_bytes"]: r for r in measurements.load(f"{host}/collectives_nccl_ring")["records"]}
    tree = {r["size_bytes"]: r for r in measurements.load(f"{host}/collectives_nccl_tree")["records"]}
    return [{"size_bytes": s, "ring_time_s": ring[s]["time_s"], "tree_time_s": tree[s]["time_s"],
             "faster": "tree" if tree[s]["time_s"] < ring[s]["time_s"] else "ring",
             "correct": bool(ring[s]["correct"] and tree[s]["correct"])} for s in sorted(set(ring) & set(tree))]


def have(host: str | None, *files: str) -> bool:
    return host is not None and all(f"{host}/{f}" in measurements.available() for f in files)
