"""Fitting the α–β model to measured collectives, NCCL's tree shapes and where algorithms cross (chapter 03 fits
them; chapter 08 compares algorithms).

The cost formulas themselves — ring, trees, hierarchical all-reduce, bus bandwidth — live once in
``helpers.formulas.comm``; this module works with them:

* :func:`fit` — measured collective times fitted to t(S) = a + b·S by least squares; for a ring all-reduce
  a = 2(p-1)α and b = 2(p-1)/p·β, which gives the link's α and β back (:func:`link_from_ring_fit`);
* :func:`btree`, :func:`double_btree` — NCCL's binary and double binary trees (src/graph/trees.cc), for diagrams;
* :func:`crossover_bytes` — the message size where one all-reduce algorithm overtakes another;
* :func:`published_busbw` — published busbw figures, each with its source.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.formulas import comm


@dataclass(frozen=True)
class Fit:
    line: comm.AlphaBeta
    n_points: int
    max_rel_error: float     # max |model - measured| / measured over the fitted points


def fit(sizes_bytes: Sequence[float], times_s: Sequence[float], relative: bool = True) -> Fit:
    """Least-squares fit of t = a + b·S. ``relative`` weights each point by 1/t, so the small (latency-bound)
    sizes count as much as the large ones; otherwise the largest sizes dominate and a can come out negative."""
    import numpy as np

    S, t = np.asarray(sizes_bytes, float), np.asarray(times_s, float)
    if S.shape != t.shape or S.size < 2:
        raise ValueError(f"need ≥ 2 (size, time) pairs of equal length; got {S.size} sizes and {t.size} times")
    if (t <= 0).any() or (S < 0).any():
        raise ValueError("times must be > 0 and sizes ≥ 0")
    w = 1 / t if relative else np.ones_like(t)
    A = np.stack([np.ones_like(S), S], axis=1) * w[:, None]
    (a, b), *_ = np.linalg.lstsq(A, t * w, rcond=None)
    if a < 0 or b < 0:      # the unconstrained optimum left the feasible set: refit on the boundary
        a, b = (0.0, float(np.sum(w * w * S * t) / np.sum(w * w * S * S))) if a < 0 else (float(np.sum(w * w * t) / np.sum(w * w)), 0.0)
    line = comm.AlphaBeta(float(a), float(b))
    rel = np.abs((a + b * S) - t) / t
    return Fit(line, int(S.size), float(rel.max()))


def link_from_ring_fit(line: comm.AlphaBeta, world_size: int) -> comm.AlphaBeta:
    """Undo the ring all-reduce's factors (``comm.ring_s``): a = 2(p-1)α, b = 2(p-1)/p·β."""
    p = comm.check_ranks(world_size)
    if p == 1:
        raise ValueError("world_size=1: a one-rank all-reduce sends nothing, so no link can be inferred")
    return comm.AlphaBeta(line.alpha_s / (2 * (p - 1)), line.beta_s_per_byte * p / (2 * (p - 1)))


# ------------------------------------------------------------------ tree shapes (for the diagrams)

def btree(world_size: int) -> dict[int, int]:
    """Parent of each rank in NCCL's in-order binary tree (root 0; rank r's lowest set bit is its level).

    With 2^b the lowest set bit of r, the parent is whichever of r ± 2^b is an odd multiple of 2^(b+1)
    (r - 2^b when the other one is past the last rank), so odd ranks are leaves."""
    p = comm.check_ranks(world_size)
    parent = {0: -1}
    for r in range(1, p):
        bit = r & -r                                    # lowest set bit
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < p else r ^ bit
    return parent


def double_btree(world_size: int) -> tuple[dict[int, int], dict[int, int]]:
    """NCCL's two complementary trees: the second mirrors the first (p even) or shifts it by one rank (p odd),
    so a rank that is inner in one tree is a leaf in the other."""
    p = comm.check_ranks(world_size)
    first = btree(p)
    if p % 2:
        m = {r: (r + 1) % p for r in range(p)}
    else:
        m = {r: p - 1 - r for r in range(p)}
    second = {m[r]: (-1 if u == -1 else m[u]) for r, u in first.items()}
    return first, dict(sorted(second.items()))


def inner_ranks(parent: dict[int, int]) -> set[int]:
    """Ranks with at least one child."""
    return {u for u in parent.values() if u != -1}


def crossover_bytes(slow_small: str, fast_small: str, world_size: int, link: comm.AlphaBeta,
                    lo: float = 1.0, hi: float = 1e13) -> float | None:
    """Message size above which ``slow_small`` becomes faster than ``fast_small`` (bisection on a log scale);
    None when they do not cross in [lo, hi]."""
    def diff(n):
        return comm.allreduce_s(slow_small, n, world_size, link) - comm.allreduce_s(fast_small, n, world_size, link)

    if diff(lo) <= 0 or diff(hi) > 0:
        return None
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if diff(mid) > 0 else (lo, mid)
    return hi


def published_busbw():
    """Published busbw figures (nccl-tests definition) with their sources: data/published_busbw.yaml."""
    from pathlib import Path

    import pandas as pd
    import yaml

    rows = yaml.safe_load((Path(__file__).resolve().parent / "data" / "published_busbw.yaml").read_text())
    return pd.DataFrame(rows)[["system", "op", "algorithm", "size", "busbw_GBps", "kind", "source", "url"]]
