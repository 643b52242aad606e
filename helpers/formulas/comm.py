"""Latency-bandwidth (α–β) costs of collectives, and nccl-tests' bus-bandwidth factor (chapters 03 and 08; used in
06, 07, 24 and the training planner).

A message of n bytes over one link costs t = α + n·β (α: latency in s, β: s per byte = 1/bandwidth). Over p ranks,
each with one full-duplex link (Thakur, Rabenseifner & Gropp, "Optimization of collective communication operations
in MPICH", IJHPCA 19(1), 2005, §4; Patarasuk & Yuan, JPDC 69(2), 2009; Sanders, Speck & Träff, Parallel Computing
35(12), 2009; NCCL src/graph/trees.cc):

    ring all-reduce          2(p-1)·α + 2(p-1)/p · n·β             reduce-scatter, then all-gather
    ring all-gather          (p-1)·α  + (p-1)/p · n·β              n = the gathered (output) size
    ring reduce-scatter      (p-1)·α  + (p-1)/p · n·β              n = the input size
    binomial tree            2⌈log2 p⌉ · (α + n·β)                 reduce to a root, then broadcast
    pipelined tree           (2d + k - 1) · (α + 3·n/k·β)          one binary tree, n cut into k chunks
    double binary tree       (2d + k - 1) · (α + 2·n/k·β)          two trees, n/2 each, k chunks
    hierarchical (2D)        2[(g-1)α_in + (g-1)/g·n·β_in] + ring(n/g over m nodes on α_out, β_out)

with d = ⌈log2 p⌉ the tree depth and k chosen to minimise the time. Per pipeline step an inner node of one binary
tree receives two chunks from its children and one from its parent (and sends three): 3n/k bytes. In a double
binary tree every rank is inner in one tree and a leaf in the other: 3·n/(2k) + n/(2k) = 2n/k bytes — the ring's
bandwidth term at the tree's logarithmic latency.

Bus bandwidth (nccl-tests, doc/PERFORMANCE.md): busbw = algbw × factor, the factor being what each rank's link
carries relative to n: all-reduce 2(p-1)/p; all-gather, reduce-scatter, all-to-all, gather, scatter (p-1)/p;
broadcast, reduce, send/recv 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

ALGORITHMS = ("ring", "binomial_tree", "pipelined_tree", "double_binary_tree")


@dataclass(frozen=True)
class AlphaBeta:
    """t(size) = alpha_s + beta_s_per_byte · size (one link's parameters, or a fitted line)."""
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


def check_ranks(world_size: int) -> int:
    """``world_size`` as an int, or a ValueError saying it must be a whole number ≥ 1."""
    if int(world_size) != world_size or world_size < 1:
        raise ValueError(f"world_size={world_size}: must be a whole number ≥ 1")
    return int(world_size)


def depth(world_size: int) -> int:
    """⌈log2 p⌉: levels of a binary (or binomial) tree over p ranks."""
    return math.ceil(math.log2(check_ranks(world_size))) if world_size > 1 else 0


# ------------------------------------------------------------------ the ring

def ring_allreduce_bytes(size_bytes: float, world_size: int) -> float:
    """Bytes each rank sends (and receives) in a ring all-reduce of ``size_bytes``: 2(p-1)/p · n."""
    p = check_ranks(world_size)
    return 2 * (p - 1) / p * size_bytes


def ring_s(size_bytes: float, world_size: int, link: AlphaBeta) -> float:
    """Ring all-reduce: 2(p-1)·α + 2(p-1)/p · n·β (Thakur et al. 2005; Patarasuk & Yuan 2009)."""
    p = check_ranks(world_size)
    return 2 * (p - 1) * link.alpha_s + ring_allreduce_bytes(size_bytes, p) * link.beta_s_per_byte


def ring_bw_s(size_bytes: float, world_size: int, bw_GBps: float) -> float:
    """The ring all-reduce's bandwidth term alone (α = 0): 2(p-1)/p · n ÷ bandwidth; 0 on one rank."""
    if not bw_GBps > 0:
        raise ValueError(f"bw_GBps={bw_GBps!r} must be > 0")
    return ring_allreduce_bytes(size_bytes, world_size) / (bw_GBps * 1e9)


def all_gather_s(size_bytes: float, world_size: int, link: AlphaBeta) -> float:
    """Ring all-gather of an ``size_bytes`` result: (p-1)·α + (p-1)/p · n·β (Thakur et al. 2005, §4.1)."""
    p = check_ranks(world_size)
    return (p - 1) * link.alpha_s + (p - 1) / p * size_bytes * link.beta_s_per_byte


def reduce_scatter_s(size_bytes: float, world_size: int, link: AlphaBeta) -> float:
    """Ring reduce-scatter of an ``size_bytes`` input: (p-1)·α + (p-1)/p · n·β, the all-gather's mirror
    (Thakur et al. 2005, §4.4); the two together are the ring all-reduce."""
    return all_gather_s(size_bytes, world_size, link)


# ------------------------------------------------------------------ trees

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
    g, m = check_ranks(gpus_per_node), check_ranks(nodes)
    return 2 * reduce_scatter_s(size_bytes, g, intra) + ring_s(size_bytes / g, m, inter)


def flat_ring_s(size_bytes: float, gpus_per_node: int, nodes: int, intra: AlphaBeta, inter: AlphaBeta) -> float:
    """One ring over all g·m ranks, paced by its slowest hop (a node boundary when m > 1)."""
    slow = inter if nodes > 1 else intra
    return ring_s(size_bytes, check_ranks(gpus_per_node) * check_ranks(nodes), slow)


# ------------------------------------------------------------------ bus bandwidth (nccl-tests)

BUSBW_OPS = {"all_reduce": "2(p-1)/p", "all_gather": "(p-1)/p", "reduce_scatter": "(p-1)/p",
             "alltoall": "(p-1)/p", "all_to_all": "(p-1)/p", "gather": "(p-1)/p", "scatter": "(p-1)/p",
             "broadcast": "1", "reduce": "1", "sendrecv": "1", "hypercube": "1"}


def busbw_factor(op: str, world_size: int) -> float:
    """nccl-tests' busbw / algbw for ``op`` on ``world_size`` ranks (doc/PERFORMANCE.md): what each rank's link
    carries relative to the message size."""
    if op not in BUSBW_OPS:
        raise ValueError(f"op={op!r}: known collectives are {sorted(BUSBW_OPS)}; choose one of them")
    n = check_ranks(world_size)
    return {"2(p-1)/p": 2 * (n - 1) / n, "(p-1)/p": (n - 1) / n, "1": 1.0}[BUSBW_OPS[op]]


def busbw_GBps(size_bytes: float, time_s: float, world_size: int, op: str = "all_reduce") -> float:
    """Bus bandwidth of a (modelled or measured) time: S/t · factor(op, p), in GB/s."""
    return size_bytes / time_s / 1e9 * busbw_factor(op, world_size)
