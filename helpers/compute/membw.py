"""Memory bandwidth the STREAM way: copy, scale, add, triad, dot (chapter 15; the roofline's slope in 28).

STREAM (McCalpin) and BabelStream (UoB-HPC) define the method this module follows:

* five kernels over arrays ``a, b, c`` of N elements, bytes counted per element as STREAM does (write-allocate
  traffic is *not* counted): copy ``c = a`` 2 words · scale ``b = q·c`` 2 · add ``c = a + b`` 3 ·
  triad ``a = b + q·c`` 3 · dot ``Σ a·b`` 2;
* each array "at least 4 times the size of the available cache memory" (STREAM's README), so the traffic
  really goes to DRAM/HBM; rate = bytes ÷ the **minimum** time over the repeats, after warm-up;
* a second, small working set that fits in the last-level cache (half of it) gives a cache ceiling for the
  hierarchical roofline.

Backends: ``torch`` (CPU or GPU; ``torch.add(b, c, alpha=q, out=a)`` is a one-pass triad), ``numpy`` (CPU,
one thread; its triad needs two passes, so it moves 5 words while STREAM counts 3 — the table shows what that
costs) and ``cupy`` (GPU, when installed: hand-written ``ElementwiseKernel``/``ReductionKernel``).
On a GPU the cache level is timed as a CUDA Graph of many launches (a single 8 MiB kernel is shorter than its
launch); if capture fails the eager loop is used and ``note`` says the figure is a launch-bound lower bound.

    python -m helpers bench membw --json         # the CLI lives in helpers.compute.bench
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from helpers.core import timing
from helpers.compute.gemm import device_name, llc_bytes, peak

# words moved and FLOPs per element, as STREAM counts them
OPS = {"copy": (2, 0), "scale": (2, 1), "add": (3, 1), "triad": (3, 2), "dot": (2, 2)}
Q = 3.0                                      # STREAM's scalar


@dataclass(frozen=True)
class MembwResult:
    kind: str            # "membw"
    op: str              # copy | scale | add | triad | dot
    backend: str         # torch | numpy | cupy
    level: str           # "memory" (arrays ≥ 4 × LLC) or "cache" (working set ≤ LLC / 2)
    dtype: str
    n_elements: int
    size_bytes: int      # STREAM-counted bytes per call
    flop: int
    time_s: float        # minimum over the repeats
    median_time_s: float
    bw_GBps: float       # size_bytes / time_s / 1e9
    median_bw_GBps: float
    peak_GBps: float | None
    pct_of_peak: float | None
    peak_note: str
    note: str            # how it was timed, caveats
    device: str
    ratio_to_torch: float | None = None   # cupy records: bw_GBps ÷ torch's same op and level in the same run


def _torch_ops(a, b, c):
    return {"copy": lambda: c.copy_(a), "scale": lambda: torch.mul(c, Q, out=b),
            "add": lambda: torch.add(a, b, out=c), "triad": lambda: torch.add(b, c, alpha=Q, out=a),
            "dot": lambda: torch.dot(a, b)}


def _numpy_ops(a, b, c):
    def triad():                              # two passes: numpy has no fused a = b + q·c
        np.multiply(c, Q, out=a)
        np.add(a, b, out=a)
    return {"copy": lambda: np.copyto(c, a), "scale": lambda: np.multiply(c, Q, out=b),
            "add": lambda: np.add(a, b, out=c), "triad": triad, "dot": lambda: np.dot(a, b)}


# The cupy STREAM kernels (issue 11): grid-stride loops over float4 (16-byte vector loads and stores), ILP
# independent vectors per thread per iteration so several loads are in flight, a scalar tail for n % 4, and a
# two-stage dot (per-block partial sums by warp shuffles, then one block sums the partials).
ILP = 4
THREADS = 256
BLOCKS_PER_SM = 8
_STREAM_SRC = r"""
#define ILP 4   // __launch_bounds__(256, 8): ≤ 32 registers, so 8 blocks of 256 threads stay resident per SM
#define LOOP(BODY_VEC, BODY_SCALAR)                                                        \
  const size_t n4 = n / 4, tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;          \
  const size_t span = (size_t)gridDim.x * blockDim.x * ILP;                               \
  for (size_t base = blockIdx.x * (size_t)blockDim.x * ILP + threadIdx.x; base < n4; base += span) { \
    _Pragma("unroll") for (int j = 0; j < ILP; ++j) {                                     \
      const size_t i = base + (size_t)j * blockDim.x; if (i < n4) { BODY_VEC; } } }       \
  for (size_t i = n4 * 4 + tid; i < n; i += (size_t)gridDim.x * blockDim.x) { BODY_SCALAR; }

extern "C" __global__ void __launch_bounds__(256, 8) stream_copy(const float* __restrict__ a, float* __restrict__ c, size_t n) {
  const float4* a4 = (const float4*)a; float4* c4 = (float4*)c;
  LOOP(c4[i] = a4[i], c[i] = a[i])
}
extern "C" __global__ void __launch_bounds__(256, 8) stream_scale(const float* __restrict__ c, float* __restrict__ b, float q, size_t n) {
  const float4* c4 = (const float4*)c; float4* b4 = (float4*)b;
  LOOP(float4 v = c4[i]; b4[i] = make_float4(q * v.x, q * v.y, q * v.z, q * v.w), b[i] = q * c[i])
}
extern "C" __global__ void __launch_bounds__(256, 8) stream_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, size_t n) {
  const float4 *a4 = (const float4*)a, *b4 = (const float4*)b; float4* c4 = (float4*)c;
  LOOP(float4 x = a4[i]; float4 y = b4[i]; c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w),
       c[i] = a[i] + b[i])
}
extern "C" __global__ void __launch_bounds__(256, 8) stream_triad(const float* __restrict__ b, const float* __restrict__ c,
                                        float* __restrict__ a, float q, size_t n) {
  const float4 *b4 = (const float4*)b, *c4 = (const float4*)c; float4* a4 = (float4*)a;
  LOOP(float4 x = b4[i]; float4 y = c4[i];
       a4[i] = make_float4(x.x + q * y.x, x.y + q * y.y, x.z + q * y.z, x.w + q * y.w), a[i] = b[i] + q * c[i])
}
__device__ float block_sum(float s) {          // warp shuffles, then one warp sums the warps' results
  __shared__ float warp_sums[32];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) warp_sums[w] = s;
  __syncthreads();
  s = (threadIdx.x < (blockDim.x + 31) / 32) ? warp_sums[lane] : 0.0f;
  if (w == 0) for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  return s;
}
extern "C" __global__ void __launch_bounds__(256, 8) stream_dot_partial(const float* __restrict__ a, const float* __restrict__ b,
                                              float* __restrict__ partial, size_t n) {
  const float4 *a4 = (const float4*)a, *b4 = (const float4*)b;
  float s = 0.0f;
  LOOP(float4 x = a4[i]; float4 y = b4[i]; s += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w, s += a[i] * b[i])
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}
extern "C" __global__ void stream_dot_final(const float* __restrict__ partial, float* __restrict__ out, int m) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < m; i += blockDim.x) s += partial[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = s;
}
"""


def cupy_blocks(sms: int, n: int | None = None) -> int:
    """Grid size of the STREAM kernels. Without ``n``: BLOCKS_PER_SM blocks of THREADS threads on every SM (full
    residency at ≤ 32 registers per thread), each thread looping over the array — the textbook grid-stride launch.
    With ``n`` (what the book measures): enough blocks for one pass, ILP float4 per thread, as torch launches its
    own elementwise kernels. On the H200 the one-pass grid was the faster of the two (the first recording, with the
    grid-stride grid, reached 0.90–0.95 × torch on copy/scale/add/triad); the loop stays for any grid size."""
    if sms < 1:
        raise ValueError(f"sms={sms}: a GPU has at least one SM")
    if n is None:
        return sms * BLOCKS_PER_SM
    per_block = THREADS * ILP * 4                # floats covered by one block in one pass
    return max(sms, min(2**31 - 1, -(-n // per_block)))


def _cupy_ops(a, b, c):
    import cupy as cp

    mod = cp.RawModule(code=_STREAM_SRC, options=("-std=c++14",))
    k = {name: mod.get_function(f"stream_{name}") for name in
         ("copy", "scale", "add", "triad", "dot_partial", "dot_final")}
    n = np.uint64(a.size)
    q = np.float32(Q)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    grid, blk = (cupy_blocks(sms, int(a.size)),), (THREADS,)
    # dot keeps the grid-stride grid: one pass of blocks means one partial sum (and one block reduction) per 4 KiB,
    # which cost 8 % on the H200 (0.92 x torch) against 1.03 x with 8 resident blocks per SM looping
    dgrid = (cupy_blocks(sms),)
    partial = cp.empty(dgrid[0], dtype=cp.float32)
    out = cp.empty(1, dtype=cp.float32)

    def dot():
        k["dot_partial"](dgrid, blk, (a, b, partial, n))
        k["dot_final"]((1,), (1024,), (partial, out, np.int32(dgrid[0])))
        return out

    return {"copy": lambda: k["copy"](grid, blk, (a, c, n)), "scale": lambda: k["scale"](grid, blk, (c, b, q, n)),
            "add": lambda: k["add"](grid, blk, (a, b, c, n)), "triad": lambda: k["triad"](grid, blk, (b, c, a, q, n)),
            "dot": dot}


def verify_cupy(n: int = 2**20 + 3) -> dict[str, float]:
    """Run every cupy kernel once on n elements (n % 4 ≠ 0 exercises the scalar tail) and return each one's
    largest relative error against numpy. GPU only: raises RuntimeError with the reason elsewhere."""
    why = cupy_status()
    if why:
        raise RuntimeError(why)
    import cupy as cp

    rng = np.random.default_rng(0)
    ha, hb, hc = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    a, b, c = cp.asarray(ha), cp.asarray(hb), cp.asarray(hc)
    ops = _cupy_ops(a, b, c)
    err = {}

    def rel(got, want):
        return float(np.max(np.abs(got - want)) / max(1e-30, float(np.max(np.abs(want)))))

    ops["copy"]()
    err["copy"] = rel(cp.asnumpy(c), ha)
    ops["scale"]()
    err["scale"] = rel(cp.asnumpy(b), np.float32(Q) * ha)
    hb2 = np.float32(Q) * ha
    ops["add"]()
    err["add"] = rel(cp.asnumpy(c), ha + hb2)
    hc2 = ha + hb2
    ops["triad"]()
    err["triad"] = rel(cp.asnumpy(a), hb2 + np.float32(Q) * hc2)
    ha2 = hb2 + np.float32(Q) * hc2
    got = float(cp.asnumpy(ops["dot"]())[0])
    want = float(np.dot(ha2.astype(np.float64), hb2.astype(np.float64)))
    err["dot"] = abs(got - want) / max(1e-30, float(np.dot(np.abs(ha2).astype(np.float64), np.abs(hb2))))
    return err


def cupy_status() -> str | None:
    """None when cupy can run kernels here, else the one-line reason."""
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except ImportError:
        return "cupy not installed (GPU-only package)"
    except Exception as e:  # noqa: BLE001 — any CUDA failure means "not usable here"
        return f"cupy not usable: {type(e).__name__}"
    return None


def _graph(fn, inner: int):
    """Capture ``inner`` launches of ``fn`` in a CUDA Graph; returns its replay (one launch for all)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    return g.replay


def default_elements(dev: torch.device) -> tuple[int, int]:
    """(N for the memory level, N for the cache level), fp32 elements, powers of two."""
    if dev.type == "cuda":
        l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 * 2**20)
        return 2**28, 2 ** int(np.log2(l2 / 2 / 3 / 4))
    # STREAM's rule is arrays of at least 4 x the last-level cache; capped at 2^26 fp32 (256 MiB per array) because a
    # virtual machine reports its host's whole L3 (480 MiB seen on the book's CI kind), far more than its cores hold
    llc = min(llc_bytes(), 64 * 2**20)
    big = max(2**22, 2 ** int(np.ceil(np.log2(4 * llc / 4))))
    return big, 2 ** int(np.log2(llc / 2 / 3 / 4))


def measure(backends=None, levels=("memory", "cache"), n_elements: int | None = None,
            n_cache: int | None = None, repeats: int | None = None, device=None, inner: int | None = None,
            ops=tuple(OPS), skipped: list | None = None) -> list[MembwResult]:
    """STREAM kernels for each backend and level; fp32. Defaults: torch + numpy on CPU, torch + cupy on GPU.

    On a GPU the cache level times ``inner`` (50) launches as one CUDA Graph. On a CPU each call is timed on its
    own (``inner`` = 1) with three times the repeats: a call of a few hundred microseconds has no launch cost
    to hide, and the minimum over many short calls is robust to other processes stealing the cores."""
    from helpers.core.device import pick_device

    dev = pick_device()[0] if device is None else torch.device(device)
    on_gpu = dev.type == "cuda"
    for op in ops:
        if op not in OPS:
            raise ValueError(f"op={op!r}: use some of {list(OPS)}")
    if backends is None:
        backends = ("torch", "cupy") if on_gpu else ("torch", "numpy")
    n_mem, n_llc = default_elements(dev)
    sizes = {"memory": n_elements or n_mem, "cache": n_cache or n_llc}
    repeats = repeats or (30 if on_gpu else 10)
    inner = inner or (50 if on_gpu else 1)
    name = device_name(dev)
    out: list[MembwResult] = []
    for backend in backends:
        why = None
        if backend == "cupy":
            why = "cupy runs on a GPU only" if not on_gpu else cupy_status()
        elif backend == "numpy" and on_gpu:
            why = "numpy runs on the host: use it on a CPU-only machine"
        elif backend not in ("torch", "numpy", "cupy"):
            raise ValueError(f"backend={backend!r}: use torch, numpy or cupy")
        if why:
            if skipped is not None:
                skipped.append((backend, why))
            continue
        for level in levels:
            if level not in sizes:
                raise ValueError(f"level={level!r}: use 'memory' or 'cache'")
            if level == "cache" and backend == "cupy":
                continue                      # the torch graph path covers the GPU cache level
            n = sizes[level]
            if backend == "numpy":
                a, b, c = (np.full(n, v, dtype=np.float32) for v in (1.0, 2.0, 0.0))
                kernels = _numpy_ops(a, b, c)
            else:
                a, b, c = (torch.full((n,), v, dtype=torch.float32, device=dev) for v in (1.0, 2.0, 0.0))
                if backend == "cupy":
                    import cupy as cp
                    kernels = _cupy_ops(*(cp.from_dlpack(x) for x in (a, b, c)))
                else:
                    kernels = _torch_ops(a, b, c)
            pk, pnote = peak(name, "", what="hbm_GBps") if level == "memory" else (
                None, "no datasheet figure for cache bandwidth")
            for op in ops:
                words, flops = OPS[op]
                fn, calls, note, reps = kernels[op], 1, "minimum over repeats", repeats
                if level == "cache" and not on_gpu:
                    reps = 3 * repeats
                if level == "cache" and (on_gpu or inner > 1):
                    calls = inner
                    if on_gpu:
                        try:
                            fn, note = _graph(kernels[op], inner), f"CUDA Graph of {inner} launches"
                        except Exception as e:  # noqa: BLE001 — capture unsupported: say so, time eagerly
                            f1 = kernels[op]
                            fn = lambda f1=f1: [f1() for _ in range(inner)]  # noqa: E731
                            note = f"eager loop of {inner} launches (graph capture failed: {type(e).__name__}); lower bound"
                    else:
                        f1 = kernels[op]
                        fn = lambda f1=f1: [f1() for _ in range(inner)]  # noqa: E731
                        note = f"loop of {inner} calls in cache"
                if backend == "numpy" and op == "triad":
                    note += "; two passes (5 words moved, 3 counted)"
                t = timing.time_fn(fn, device=dev if on_gpu else None, warmup=2, repeats=reps)
                nbytes = words * 4 * n * calls
                bw, med = nbytes / t.min_s / 1e9, nbytes / t.median_s / 1e9
                out.append(MembwResult("membw", op, backend, level, "fp32", n, nbytes, flops * n * calls,
                                       t.min_s, t.median_s, bw, med, pk,
                                       None if pk is None else 100 * bw / pk, pnote, note, name))
            del a, b, c, kernels
    return with_torch_ratio(out)


def with_torch_ratio(records: list[MembwResult]) -> list[MembwResult]:
    """Fill ``ratio_to_torch`` of every cupy record from the torch record of the same op and level."""
    import dataclasses

    ref = {(r.op, r.level): r.bw_GBps for r in records if r.backend == "torch"}
    return [dataclasses.replace(r, ratio_to_torch=r.bw_GBps / ref[(r.op, r.level)])
            if r.backend == "cupy" and (r.op, r.level) in ref else r for r in records]


def best(records, level: str = "memory"):
    """The record with the highest bandwidth at ``level`` (None if there is none)."""
    rs = [r for r in records if _get(r, "kind") == "membw" and _get(r, "level") == level]
    return max(rs, key=lambda r: _get(r, "bw_GBps"), default=None)


def _get(r, key):
    return r[key] if isinstance(r, dict) else getattr(r, key)
