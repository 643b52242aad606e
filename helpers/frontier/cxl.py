"""A CXL memory-tier model: average latency and bandwidth when a working set spills past local DRAM (chapter 30).

CXL (Compute Express Link) lets a CPU load and store to memory on a PCIe-attached device (Type 3 expander) or a
shared pool behind a switch. It adds capacity at the price of latency and per-link bandwidth. With a fraction f_i of
accesses served by tier i (latency L_i, bandwidth B_i):

    average latency      L = sum_i f_i L_i                       (a pointer-chasing, latency-bound workload)
    streaming time       T = sum_i (f_i S) / B_i                 (S bytes streamed; tiers read one after another)
    interleaved stream   B = sum_i B_i  when pages are striped so all tiers stream at once, limited by the mix

The tiers come from ``data/memory_tiers.yaml`` (each row with its source; they are model inputs, not measurements).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent / "data" / "memory_tiers.yaml"


@dataclass(frozen=True)
class Tier:
    tier: str
    latency_ns: float
    bw_GBps: float
    source: str
    notes: str = ""


@lru_cache(maxsize=1)
def tiers() -> dict[str, Tier]:
    rows = yaml.safe_load(DATA.read_text())
    out = {}
    for r in rows:
        if not str(r.get("source", "")).startswith("http"):
            raise ValueError(f"{DATA.name}: tier {r.get('tier')!r} has no source URL")
        out[r["tier"]] = Tier(**r)
    return out


@dataclass(frozen=True)
class Placement:
    local_GB: float
    spill_tier: str
    working_set_GB: float
    spill_fraction: float
    avg_latency_ns: float
    stream_bw_GBps: float          # tiers read in turn (each byte from where it lives)
    interleaved_bw_GBps: float     # pages striped in proportion so all tiers stream at once


def place(working_set_GB: float, local_GB: float, spill_tier: str = "CXL expander (direct)",
          local_tier: str = "local DDR5") -> Placement:
    """A working set with uniform accesses: what fits stays local, the rest spills to ``spill_tier``."""
    t = tiers()
    for name in (spill_tier, local_tier):
        if name not in t:
            raise ValueError(f"tier {name!r}: known tiers are {list(t)}")
    if working_set_GB <= 0 or local_GB <= 0:
        raise ValueError(f"working_set_GB={working_set_GB}, local_GB={local_GB}: both must be > 0")
    lo, sp = t[local_tier], t[spill_tier]
    f = max(0.0, (working_set_GB - local_GB) / working_set_GB)
    lat = (1 - f) * lo.latency_ns + f * sp.latency_ns
    stream = 1 / ((1 - f) / lo.bw_GBps + f / sp.bw_GBps)
    # striped: both tiers busy at once; the one holding more bytes per unit bandwidth finishes last
    inter = 1 / max((1 - f) / lo.bw_GBps, f / sp.bw_GBps) if f > 0 else lo.bw_GBps
    return Placement(local_GB, spill_tier, working_set_GB, f, lat, stream, inter)


def sweep(working_sets_GB, local_GB: float, spill_tier: str = "CXL expander (direct)") -> list[Placement]:
    return [place(w, local_GB, spill_tier) for w in working_sets_GB]


def best_split(local_bw_GBps: float, cxl_bw_GBps: float) -> float:
    """The fraction of pages on CXL that maximises interleaved bandwidth: B_cxl / (B_local + B_cxl)."""
    return cxl_bw_GBps / (local_bw_GBps + cxl_bw_GBps)
