"""Latency-bandwidth (alpha-beta) cost models of collectives (chapter 03 fits them; chapter 08 compares algorithms).

A message of n bytes over one link costs  t = α + n·β  (α: latency in s, β: s per byte = 1/bandwidth).
Measured collective times are fitted to  t(S) = a + b·S  by least squares (:func:`fit`); for a ring all-reduce
a = 2(p-1)α and b = 2(p-1)/p·β, which gives the link's α and β back (:func:`link_from_ring_fit`).

All-reduce of n bytes over p ranks (Thakur, Rabenseifner & Gropp, IJHPCA 2005; Patarasuk & Yuan, JPDC 2009;
Sanders, Speck & Träff, Parallel Computing 2009; NCCL src/graph/trees.cc). Each rank has one full-duplex link:

    ring                 2(p-1)·α + 2(p-1)/p · n·β
    binomial tree        2⌈log2 p⌉ · (α + n·β)                         reduce to a root, then broadcast
    pipelined tree       (2d + k - 1) · (α + 3·n/k·β)                  one binary tree, n cut into k chunks
    double binary tree   (2d + k - 1) · (α + 2·n/k·β)                  two trees, n/2 each, k chunks
    hierarchical (2D)    2[(g-1)α_in + (g-1)/g·n·β_in] + ring(n/g over m nodes on α_out, β_out)

with d = ⌈log2 p⌉ the tree depth and k chosen to minimise the time. Per pipeline step an inner node of one
binary tree receives two chunks from its children and one from its parent (and sends three): 3n/k bytes. In a
double binary tree every rank is inner in one tree and a leaf in the other: 3·n/(2k) + n/(2k) = 2n/k bytes — the
ring's bandwidth term, at the tree's logarithmic latency.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ALGORITHMS = ("ring", "binomial_tree", "pipelined_tree", "double_binary_tree")


@dataclass(frozen=True)
class AlphaBeta:
    """t(size) = alpha_s + beta_s_per_byte · size (a fitted line, or one link's parameters)."""
    alpha_s: float
    beta_s_per_byte: float

    def __post_init__(self):
        if self.alpha_s < 0 or self.beta_s_per_byte < 0:
            raise ValueError(f"alpha_s={self.alpha_s}, beta_s_per_byte={self.beta_s_per_byte}: both must be ≥ 0 "
                             "(a negative fit means the points do not follow a line; fit fewer or larger sizes)")

    @property
    def bw_GBps(self) -> float:
        """1/β in GB/s (10^9 B/s); infinite when β = 0."""
        return math.inf if self.beta_s_per_byte == 0 else 1 / self.beta_s_per_byte / 1e9

    @property
    def half_bw_bytes(self) -> float:
        """n½ = α/β: the message size that reaches half of the asymptotic bandwidth."""
        return math.inf if self.beta_s_per_byte == 0 else self.alpha_s / self.beta_s_per_byte

    def time_s(self, size_bytes: float) -> float:
        return self.alpha_s + self.beta_s_per_byte * size_bytes

    @classmethod
    def from_link(cls, latency_us: float, bw_GBps: float) -> "AlphaBeta":
        if latency_us < 0 or bw_GBps <= 0:
            raise ValueError(f"latency_us={latency_us} must be ≥ 0 and bw_GBps={bw_GBps} > 0")
        return cls(latency_us * 1e-6, 1 / (bw_GBps * 1e9))


@dataclass(frozen=True)
class Fit:
    line: AlphaBeta
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
    line = AlphaBeta(float(a), float(b))
    rel = np.abs((a + b * S) - t) / t
    return Fit(line, int(S.size), float(rel.max()))


def link_from_ring_fit(line: AlphaBeta, world_size: int) -> AlphaBeta:
    """Undo the ring all-reduce's factors: a = 2(p-1)α, b = 2(p-1)/p·β."""
    p = _p(world_size)
    if p == 1:
        raise ValueError("world_size=1: a one-rank all-reduce sends nothing, so no link can be inferred")
    return AlphaBeta(line.alpha_s / (2 * (p - 1)), line.beta_s_per_byte * p / (2 * (p - 1)))


def _p(world_size: int) -> int:
    if int(world_size) != world_size or world_size < 1:
        raise ValueError(f"world_size={world_size}: must be a whole number ≥ 1")
    return int(world_size)


def depth(world_size: int) -> int:
    """⌈log2 p⌉: levels of a binary (or binomial) tree over p ranks."""
    return math.ceil(math.log2(_p(world_size))) if world_size > 1 else 0


def ring_s(size_bytes: float, world_size: int, link: AlphaBeta) -> float:
    p = _p(world_size)
    return 2 * (p - 1) * link.alpha_s + 2 * (p - 1) / p * size_bytes * link.beta_s_per_byte


def binomial_tree_s(size_bytes: float, world_size: int, link: AlphaBeta) -> float:
    return 2 * depth(world_size) * (link.alpha_s + size_bytes * link.beta_s_per_byte)


def _pipelined(size_bytes, world_size, link, load, chunks):
    """min over k of (2d + k - 1)(α + load·n/k·β); returns (time, k)."""
    d = depth(world_size)
    if d == 0:
        return 0.0, 1
    B = load * size_bytes * link.beta_s_per_byte
    cost = lambda k: (2 * d + k - 1) * (link.alpha_s + B / k)  # noqa: E731
    if chunks is not None:
        return cost(chunks), chunks
    k_star = math.sqrt((2 * d - 1) * B / link.alpha_s) if link.alpha_s > 0 else 1e9
    best = min({max(1, math.floor(k_star)), max(1, math.ceil(k_star))}, key=cost)
    return cost(best), best


def pipelined_tree_s(size_bytes: float, world_size: int, link: AlphaBeta, chunks: int | None = None) -> float:
    return _pipelined(size_bytes, world_size, link, 3, chunks)[0]


def double_binary_tree_s(size_bytes: float, world_size: int, link: AlphaBeta, chunks: int | None = None) -> float:
    return _pipelined(size_bytes, world_size, link, 2, chunks)[0]


def allreduce_s(algorithm: str, size_bytes: float, world_size: int, link: AlphaBeta) -> float:
    fns = {"ring": ring_s, "binomial_tree": binomial_tree_s, "pipelined_tree": pipelined_tree_s,
           "double_binary_tree": double_binary_tree_s}
    if algorithm not in fns:
        raise ValueError(f"algorithm={algorithm!r}: choose one of {ALGORITHMS}")
    return fns[algorithm](size_bytes, world_size, link)


def hierarchical_s(size_bytes: float, gpus_per_node: int, nodes: int, intra: AlphaBeta, inter: AlphaBeta) -> float:
    """2D all-reduce: reduce-scatter inside each node, all-reduce of n/g across nodes (g rings in parallel, one
    per GPU and NIC), all-gather inside the node."""
    g, m = _p(gpus_per_node), _p(nodes)
    inside = (g - 1) * intra.alpha_s + (g - 1) / g * size_bytes * intra.beta_s_per_byte
    return 2 * inside + ring_s(size_bytes / g, m, inter)


def flat_ring_s(size_bytes: float, gpus_per_node: int, nodes: int, intra: AlphaBeta, inter: AlphaBeta) -> float:
    """One ring over all g·m ranks, paced by its slowest hop (a node boundary when m > 1)."""
    slow = inter if nodes > 1 else intra
    return ring_s(size_bytes, _p(gpus_per_node) * _p(nodes), slow)


def busbw_GBps(size_bytes: float, time_s: float, world_size: int) -> float:
    """All-reduce bus bandwidth of a (modelled or measured) time: S/t · 2(p-1)/p."""
    p = _p(world_size)
    return size_bytes / time_s / 1e9 * 2 * (p - 1) / p


# ------------------------------------------------------------------ tree shapes (for the diagrams)

def btree(world_size: int) -> dict[int, int]:
    """Parent of each rank in NCCL's in-order binary tree (root 0; rank r's lowest set bit is its level).

    With 2^b the lowest set bit of r, the parent is whichever of r ± 2^b is an odd multiple of 2^(b+1)
    (r - 2^b when the other one is past the last rank), so odd ranks are leaves."""
    p = _p(world_size)
    parent = {0: -1}
    for r in range(1, p):
        bit = r & -r                                    # lowest set bit
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < p else r ^ bit
    return parent


def double_btree(world_size: int) -> tuple[dict[int, int], dict[int, int]]:
    """NCCL's two complementary trees: the second mirrors the first (p even) or shifts it by one rank (p odd),
    so a rank that is inner in one tree is a leaf in the other."""
    p = _p(world_size)
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


def crossover_bytes(slow_small: str, fast_small: str, world_size: int, link: AlphaBeta,
                    lo: float = 1.0, hi: float = 1e13) -> float | None:
    """Message size above which ``slow_small`` becomes faster than ``fast_small`` (bisection on a log scale);
    None when they do not cross in [lo, hi]."""
    diff = lambda n: allreduce_s(slow_small, n, world_size, link) - allreduce_s(fast_small, n, world_size, link)  # noqa: E731
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
