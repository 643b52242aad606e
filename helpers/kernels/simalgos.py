"""Tree and graph algorithms as CUDA kernels in numba's simulator: a block-wide sum (two shared-memory trees) and a
level-synchronous breadth-first search (chapters 10 and 25).

* **Reduction.** Each block loads 2·blockDim elements, adds pairs, and halves the active threads every step until
  one sum is left, then one atomicAdd per block combines the blocks (Harris, "Optimizing Parallel Reduction in
  CUDA", kernels 1–3). The *interleaved* tree (step k: thread t works if t mod 2k = 0, on s[t] and s[t + k])
  leaves most lanes of every warp idle — divergence; the *strided* tree packs the working threads (thread t
  works on s[2kt]) but sends lanes 2k words apart, into the same shared-memory banks; the *sequential* tree
  (threads t < k work on s[t] and s[t + k]) keeps active threads packed with consecutive addresses. The counts from
  ``helpers.kernels.simt`` show both effects. (Warp shuffles, the next stage, are not simulated by numba; the H200
  recording has all four stages.)
* **BFS.** One thread per vertex of a CSR graph; at level L, every vertex on the frontier (level = L) writes
  L + 1 into each unvisited neighbour. Several threads may write the same neighbour — all write the same value, a
  benign race — and a flag says whether the frontier grew. The levels are checked against networkx.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from helpers.kernels import simt
from helpers.kernels.simt import cuda, float32

RB = 128           # reduction block: 128 threads (4 warps), each loading two elements


@cuda.jit
def reduce_interleaved(x, out):
    s = cuda.shared.array(RB, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * RB * 2 + t
    s[t] = x[i] + x[i + RB]
    cuda.syncthreads()
    k = 1
    while k < RB:
        if t % (2 * k) == 0:
            s[t] += s[t + k]
        cuda.syncthreads()
        k *= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def reduce_strided(x, out):
    s = cuda.shared.array(RB, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * RB * 2 + t
    s[t] = x[i] + x[i + RB]
    cuda.syncthreads()
    k = 1
    while k < RB:
        j = 2 * k * t                      # packed threads (no divergence) but strided addresses: bank conflicts
        if j < RB:
            s[j] += s[j + k]
        cuda.syncthreads()
        k *= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def reduce_sequential(x, out):
    s = cuda.shared.array(RB, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * RB * 2 + t
    s[t] = x[i] + x[i + RB]
    cuda.syncthreads()
    k = RB // 2
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def bfs_level(indptr, indices, level, current, changed):
    v = cuda.grid(1)
    if v < level.shape[0] and level[v] == current:
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if level[u] == -1:
                level[u] = current + 1        # benign race: every writer writes the same value
                changed[0] = 1


KERNELS = {"interleaved": reduce_interleaved, "strided": reduce_strided, "sequential": reduce_sequential}


@dataclass(frozen=True)
class ReduceRun:
    kernel: str
    n: int
    blocks: int
    result: float
    expected: float
    correct: bool
    shared_requests: int        # warp-wide shared-memory instructions in the tree
    active_lanes_mean: float    # lanes per shared request (32 = whole warps busy)
    bank_ways_max: int
    sim_time_s: float


def reduce(kernel: str = "sequential", n: int = 1024, seed: int = 0) -> ReduceRun:
    """Sum n fp32 values with one of the two trees; count the shared-memory requests of the tree."""
    k = KERNELS.get(kernel)
    if k is None:
        raise ValueError(f"kernel={kernel!r}: use one of {list(KERNELS)}")
    if n < 2 * RB or n % (2 * RB) or n > 4096:
        raise ValueError(f"n={n}: use a multiple of {2 * RB} up to 4096 (one simulated Python thread per CUDA thread)")
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    log = simt.AccessLog()
    t0 = time.perf_counter()
    with simt._tracing_shared(log):
        k[n // (2 * RB), RB](x, out)
    dt = time.perf_counter() - t0
    want = float(x.astype(np.float64).sum())
    st = [s for s in simt.analyse(log, kernel, RB) if s.space == "shared"]
    tree = [s for s in st if s.op == "load"]
    req = sum(s.requests for s in tree)
    lanes = sum(s.accesses for s in tree) / max(1, req)
    return ReduceRun(kernel, n, n // (2 * RB), float(out[0]), want, abs(float(out[0]) - want) < 1e-3 * n ** 0.5,
                     req, lanes, max(s.bank_ways_max for s in st), dt)


@dataclass(frozen=True)
class BfsRun:
    vertices: int
    edges: int
    levels: int                 # kernel launches that grew the frontier
    max_level: int
    matches_networkx: bool
    sim_time_s: float


def bfs(n: int = 64, p: float = 0.06, source: int = 0, seed: int = 0) -> tuple[BfsRun, np.ndarray]:
    """Level-synchronous BFS of a G(n, p) random graph in the simulator; levels (-1 = unreachable) vs networkx."""
    import networkx as nx

    if not 2 <= n <= 256 or not 0 < p <= 1 or not 0 <= source < n:
        raise ValueError(f"n={n}, p={p}, source={source}: use 2 ≤ n ≤ 256, 0 < p ≤ 1, 0 ≤ source < n")
    g = nx.gnp_random_graph(n, p, seed=seed)
    indptr = np.zeros(n + 1, np.int64)
    nbrs = [sorted(g.neighbors(v)) for v in range(n)]
    indptr[1:] = np.cumsum([len(a) for a in nbrs])
    indices = np.array([u for a in nbrs for u in a], np.int64) if indptr[-1] else np.zeros(1, np.int64)
    level = np.full(n, -1, np.int64)
    level[source] = 0
    changed = np.zeros(1, np.int64)
    t0 = time.perf_counter()
    cur, launches = 0, 0
    threads = 32
    while True:
        changed[0] = 0
        bfs_level[(n + threads - 1) // threads, threads](indptr, indices, level, cur, changed)
        launches += 1
        if not changed[0]:
            break
        cur += 1
    dt = time.perf_counter() - t0
    ref = nx.single_source_shortest_path_length(g, source)
    want = np.array([ref.get(v, -1) for v in range(n)])
    return BfsRun(n, g.number_of_edges(), launches - 1, int(level.max()), bool((level == want).all()), dt), level
