"""CUDA kernels in Python, run by numba's CUDA simulator with every memory access counted (chapter 10).

numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) runs each CUDA thread of a block as a Python thread, with real
``syncthreads`` barriers and real shared arrays, so a kernel written for the GPU runs unchanged on a laptop. It
does not model the memory system. This module adds the one thing needed to *see* coalescing and bank conflicts:
the arrays a kernel touches (its arguments and its ``cuda.shared.array`` tiles) are wrapped in :class:`Traced`,
which logs (block, thread, n-th access, element) for every load and store. Threads ``32·w … 32·w+31`` of a block
form warp ``w``; the n-th access of each thread of a warp to one array is one warp-wide memory instruction (a
*request*), as it is on the GPU for code without divergence. From the log:

* global memory: a request is served in 32-byte **sectors**; sectors per request and the efficiency
  (useful bytes ÷ 32 · sectors) say how well the warp's addresses coalesce;
* shared memory: 32 banks of 4-byte words, bank = word mod 32; a request costs as many passes (*ways*) as the
  largest number of distinct words that fall into one bank (the same word is broadcast).

The simulator is slow (each thread is a Python thread): keep matrices at 32×32 and a few blocks.
The GPU timings of the same ideas come from ``helpers.kernels.gpukernels`` (cupy) on the H200.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

if "numba" in sys.modules and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    raise ImportError("helpers.kernels.simt needs numba's CUDA simulator, but numba was imported without "
                      "NUMBA_ENABLE_CUDASIM=1: import helpers.kernels.simt before numba (or set the variable)")
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
from numba import cuda, float32  # noqa: E402

TILE = 16          # matmul tile: 16×16 threads, two 16×16 fp32 shared tiles
TT, TROWS = 32, 8  # transpose tile 32×32, moved by 32×8 threads (each thread 4 rows)
SECTOR_BYTES, BANKS, BANK_BYTES, WARP = 32, 32, 4, 32


@cuda.jit
def matmul_naive(A, B, C):
    """One thread per C element; threadIdx.x walks the columns, so a warp reads a row of B (coalesced)."""
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_naive_strided(A, B, C):
    """The same arithmetic with the thread mapping swapped: threadIdx.x walks the rows, so neighbouring threads
    of a warp touch addresses a whole row apart (uncoalesced)."""
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_tiled(A, B, C):
    """Tiled matmul: each block stages TILE×TILE tiles of A and B in shared memory, so every element loaded from
    global memory is used TILE times. Assumes the sizes are multiples of TILE (checked by :func:`run`)."""
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = 0.0
    for t in range(A.shape[1] // TILE):
        sA[ty, tx] = A[row, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


@cuda.jit
def transpose_shared(A, T):
    """Transpose through a 32×32 shared tile: loads and stores to global memory coalesce, but reading the tile
    by column puts all 32 threads of a warp in one bank (a 32-way conflict)."""
    tile = cuda.shared.array((TT, TT), float32)
    x = cuda.blockIdx.x * TT + cuda.threadIdx.x
    y0 = cuda.blockIdx.y * TT
    for j in range(cuda.threadIdx.y, TT, TROWS):
        tile[j, cuda.threadIdx.x] = A[y0 + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * TT + cuda.threadIdx.x
    for j in range(cuda.threadIdx.y, TT, TROWS):
        T[cuda.blockIdx.x * TT + j, xo] = tile[cuda.threadIdx.x, j]


@cuda.jit
def transpose_padded(A, T):
    """The same transpose with one padding column (32×33 tile): a column now spans all 32 banks."""
    tile = cuda.shared.array((TT, TT + 1), float32)
    x = cuda.blockIdx.x * TT + cuda.threadIdx.x
    y0 = cuda.blockIdx.y * TT
    for j in range(cuda.threadIdx.y, TT, TROWS):
        tile[j, cuda.threadIdx.x] = A[y0 + j, x]
    cuda.syncthreads()
    xo = cuda.blockIdx.y * TT + cuda.threadIdx.x
    for j in range(cuda.threadIdx.y, TT, TROWS):
        T[cuda.blockIdx.x * TT + j, xo] = tile[cuda.threadIdx.x, j]


class AccessLog:
    """Every load and store of the traced arrays of one kernel run, from all simulated threads."""

    def __init__(self):
        self.rows: list[tuple] = []          # (array, space, block, thread, seq, byte_address, is_store)
        self._seq: dict[tuple, int] = defaultdict(int)

    def record(self, array: "Traced", flat: int, is_store: bool) -> None:
        t = threading.current_thread()
        block, tid = tuple(t.blockIdx), t.thread_id       # a simulator BlockThread
        key = (block, tid, array.name)
        seq = self._seq[key]
        self._seq[key] = seq + 1
        self.rows.append((array.name, array.space, block, tid, seq, flat * array.data.itemsize, is_store))


class Traced:
    """An array a kernel indexes like a device array; every element access is written to an :class:`AccessLog`."""

    def __init__(self, name: str, data: np.ndarray, space: str, log: AccessLog):
        self.name, self.data, self.space, self.log = name, data, space, log
        self.shape, self.dtype, self.ndim, self.size = data.shape, data.dtype, data.ndim, data.size

    def _flat(self, idx) -> int:
        idx = idx if isinstance(idx, tuple) else (idx,)
        return int(np.ravel_multi_index(tuple(int(i) for i in idx), self.shape))

    def __getitem__(self, idx):
        self.log.record(self, self._flat(idx), False)
        return self.data[idx]

    def __setitem__(self, idx, value):
        self.log.record(self, self._flat(idx), True)
        self.data[idx] = value


_shared_lock = threading.Lock()


class _tracing_shared:
    """While active, ``cuda.shared.array`` in simulated kernels returns :class:`Traced` tiles (one per source line,
    as the simulator itself does)."""

    def __init__(self, log: AccessLog):
        from numba.cuda.simulator import kernelapi

        self.cls, self.log = kernelapi.FakeCUDAShared, log

    def __enter__(self):
        from numba.core import types
        from numba.np import numpy_support

        log, self.orig = self.log, self.cls.array

        def array(shared, shape, dtype):
            frame = traceback.extract_stack(sys._getframe())[-2]
            caller = (frame.filename, frame.lineno)
            with _shared_lock:
                cache = shared.__dict__.setdefault("_book_traced", {})
                if caller not in cache:
                    dt = numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else np.dtype(dtype)
                    cache[caller] = Traced(f"shared {(frame.line or '?').split('=')[0].strip()}",
                                           np.zeros(shape, dt), "shared", log)
                return cache[caller]

        self.cls.array = array
        return self

    def __exit__(self, *exc):
        self.cls.array = self.orig


@dataclass(frozen=True)
class AccessStats:
    kernel: str
    array: str                 # argument name, or "shared NAME" for a cuda.shared.array tile
    space: str                 # global | shared
    op: str                    # load | store
    requests: int              # warp-wide memory instructions
    accesses: int              # thread-level element accesses
    sectors_per_request: float | None    # global: 32-B sectors touched per request (1 warp × fp32 ideal: 4)
    efficiency_pct: float | None         # global: useful bytes / (32 · sectors)
    bank_ways_mean: float | None         # shared: passes per request (1 = conflict-free)
    bank_ways_max: int | None
    active_lanes_mean: float = 32.0      # threads of the warp taking part in a request (< 32: divergence or tail)


def analyse(log: AccessLog, kernel: str, block_threads: int) -> list[AccessStats]:
    """Group the log into warp-wide requests and count sectors (global) or bank passes (shared)."""
    if block_threads < 1:
        raise ValueError(f"block_threads={block_threads}: a block has at least one thread")
    groups: dict[tuple, list[int]] = defaultdict(list)
    for name, space, block, tid, seq, addr, store in log.rows:
        groups[(name, space, "store" if store else "load", block, tid // WARP, seq)].append(addr)
    per: dict[tuple, list[list[int]]] = defaultdict(list)
    for (name, space, op, *_), addrs in groups.items():
        per[(name, space, op)].append(addrs)
    out = []
    for (name, space, op), reqs in sorted(per.items()):
        n_acc = sum(len(a) for a in reqs)
        if space == "global":
            sectors = [len({a // SECTOR_BYTES for a in r}) for r in reqs]
            useful = sum(len(set(r)) * 4 for r in reqs)          # fp32 kernels: 4 useful bytes per address
            out.append(AccessStats(kernel, name, space, op, len(reqs), n_acc, sum(sectors) / len(reqs),
                                   100.0 * useful / (SECTOR_BYTES * sum(sectors)), None, None, n_acc / len(reqs)))
        else:
            ways = []
            for r in reqs:
                words: dict[int, set] = defaultdict(set)
                for a in r:
                    words[(a // BANK_BYTES) % BANKS].add(a // BANK_BYTES)
                ways.append(max(len(w) for w in words.values()))
            out.append(AccessStats(kernel, name, space, op, len(reqs), n_acc, None, None,
                                   sum(ways) / len(ways), max(ways), n_acc / len(reqs)))
    return out


def warp_request(stride_elems: int, itemsize: int = 4, space: str = "global") -> AccessStats:
    """The counts for one warp whose lane i touches element i·stride (of ``itemsize`` bytes): sectors per request
    (global) or bank ways (shared), through the same :func:`analyse` the kernels use."""
    if stride_elems < 0 or itemsize not in (1, 2, 4, 8, 16):
        raise ValueError(f"stride_elems={stride_elems}, itemsize={itemsize}: use a stride ≥ 0 and 1/2/4/8/16 bytes")
    log = AccessLog()
    log.rows = [("x", space, (0, 0, 0), lane, 0, lane * stride_elems * itemsize, False) for lane in range(WARP)]
    (st,) = analyse(log, "one warp", WARP)
    if space == "global":                                # analyse counts 4-byte words as useful: fix the size
        useful = len({lane * stride_elems for lane in range(WARP)}) * itemsize
        sectors = st.sectors_per_request
        st = AccessStats(st.kernel, st.array, st.space, st.op, 1, WARP, sectors,
                         100.0 * useful / (SECTOR_BYTES * sectors), None, None)
    return st


@dataclass(frozen=True)
class SimRun:
    kernel: str
    n: int
    grid: tuple
    block: tuple
    correct: bool              # equals the numpy result
    max_abs_err: float
    global_loads: int          # thread-level loads from global memory (counted)
    global_sectors: int        # 32-B sectors those loads touched (counted)
    sim_time_s: float          # wall time of the simulation (not a GPU time)


KERNELS = {"naive": matmul_naive, "naive_strided": matmul_naive_strided, "tiled": matmul_tiled,
           "transpose": transpose_shared, "transpose_padded": transpose_padded}


def run(kernel: str, n: int = 32, seed: int = 0, trace: bool = True) -> tuple[SimRun, list[AccessStats]]:
    """Run one kernel on n×n fp32 inputs in the simulator, check it against numpy, and count its accesses."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel={kernel!r}: use one of {list(KERNELS)}")
    step = TT if kernel.startswith("transpose") else TILE
    if n < step or n % step or n > 128:
        raise ValueError(f"n={n}: use a multiple of {step} between {step} and 128 (the simulator runs one Python "
                         "thread per CUDA thread)")
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    out = np.zeros((n, n), np.float32)
    log = AccessLog()
    wrap = (lambda name, x: Traced(name, x, "global", log)) if trace else (lambda name, x: x)
    if kernel.startswith("transpose"):
        block, grid = (TT, TROWS), (n // TT, n // TT)
        args, want = (wrap("A", A), wrap("T", out)), A.T
    else:
        block, grid = (TILE, TILE), (n // TILE, n // TILE)
        args, want = (wrap("A", A), wrap("B", B), wrap("C", out)), A @ B
    t0 = time.perf_counter()
    if trace:
        with _tracing_shared(log):
            KERNELS[kernel][grid, block](*args)
    else:
        KERNELS[kernel][grid, block](*args)
    dt = time.perf_counter() - t0
    err = float(np.max(np.abs(out - want)))
    stats = analyse(log, kernel, block[0] * block[1]) if trace else []
    gl = [s for s in stats if s.space == "global" and s.op == "load"]
    sectors = int(round(sum(s.sectors_per_request * s.requests for s in gl)))
    return SimRun(kernel, n, grid, block, err < 1e-3 * n, err, sum(s.accesses for s in gl), sectors, dt), stats
