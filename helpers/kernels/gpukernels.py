"""The chapter-10/25 kernels as real CUDA (cupy ``RawModule``), timed on a GPU with CUDA events (H200 recordings).

Each experiment isolates one effect with the same bytes or FLOPs on both sides of the comparison:

* ``copy``: coalesced vs strided reads — a permutation that sends neighbouring threads ``stride`` elements apart —
  then the stride-1 copy with 16-byte (float4) loads and stores;
* ``transpose``: naive (strided writes) vs a 32×32 shared tile (32-way bank conflicts) vs the tile padded to 32×33;
* ``divergence``: the same two FMA chains, chosen per thread (odd/even lanes: the warp runs both) or per warp;
* ``atomics``: atomicAdd of one per element into 1 … 65,536 counters (contention falls as counters grow);
* ``reduction``: a sum in stages — interleaved shared-memory tree, sequential addressing, warp shuffles,
  then float4 loads in a grid-stride loop — each as GB/s and % of the HBM datasheet bandwidth;
* ``matmul``: naive vs 16×16 shared-memory tiles vs cuBLAS (``torch.mm``), fp32, TFLOP/s.

Every function returns frozen records and raises RuntimeError with the reason where cupy or a GPU is missing;
``available()`` says which. The simulator versions of these kernels, with their accesses counted, are in
``helpers.kernels.simt``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.core import timing

SRC = r"""
extern "C" __global__ void copy_perm(const float* __restrict__ in, float* __restrict__ out, unsigned n, unsigned stride) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  unsigned rows = n / stride;                       // a permutation: thread i reads (i % rows)·stride + i / rows
  out[i] = in[(i % rows) * stride + i / rows];
}
extern "C" __global__ void copy_vec4(const float4* __restrict__ in, float4* __restrict__ out, unsigned n4) {
  // the optimised stride-1 copy: one 16-byte load and store per thread, a block per 256 of them (no loop: on the
  // H200 this beats a grid-stride loop over a GPU-sized grid, 88 % vs 83 % of the datasheet at 1 GiB per array)
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}
#define T 32
#define R 8
extern "C" __global__ void transpose_naive(const float* in, float* out, int n) {
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int j = 0; j < T; j += R) out[x * n + y + j] = in[(y + j) * n + x];
}
template <int PAD> __device__ void transpose_tile(const float* in, float* out, int n) {
  __shared__ float tile[T][T + PAD];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int j = 0; j < T; j += R) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
  for (int j = 0; j < T; j += R) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
extern "C" __global__ void transpose_shared(const float* in, float* out, int n) { transpose_tile<0>(in, out, n); }
extern "C" __global__ void transpose_padded(const float* in, float* out, int n) { transpose_tile<1>(in, out, n); }
__device__ float chain_a(float x, int it) { for (int k = 0; k < it; ++k) x = x * 1.0001f + 0.5f; return x; }
__device__ float chain_b(float x, int it) { for (int k = 0; k < it; ++k) x = x * 0.9999f - 0.5f; return x; }
extern "C" __global__ void branch(float* x, unsigned n, int per_warp, int it) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  bool odd = per_warp ? ((threadIdx.x >> 5) & 1) : (threadIdx.x & 1);
  x[i] = odd ? chain_a(x[i], it) : chain_b(x[i], it);
}
extern "C" __global__ void count(unsigned* bins, unsigned n, unsigned nbins) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(&bins[i % nbins], 1u);
}
extern "C" __global__ void reduce_interleaved(const float* in, float* out, unsigned n) {
  __shared__ float s[256]; unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.f; __syncthreads();
  for (unsigned k = 1; k < blockDim.x; k *= 2) { if (t % (2 * k) == 0) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) atomicAdd(out, s[0]);
}
extern "C" __global__ void reduce_sequential(const float* in, float* out, unsigned n) {
  __shared__ float s[256]; unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.f; __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) atomicAdd(out, s[0]);
}
__device__ float warp_then_block(float v) {
  __shared__ float w[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? w[threadIdx.x] : 0.f;
  if (threadIdx.x < 32) for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
extern "C" __global__ void reduce_shuffle(const float* in, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = warp_then_block(i < n ? in[i] : 0.f);
  if (threadIdx.x == 0) atomicAdd(out, v);
}
extern "C" __global__ void reduce_vec4(const float4* in, float* out, unsigned n4) {
  float v = 0.f;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 q = in[i]; v += (q.x + q.y) + (q.z + q.w); }
  v = warp_then_block(v);
  if (threadIdx.x == 0) atomicAdd(out, v);
}
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
  int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x; float acc = 0.f;
  for (int k = 0; k < n; ++k) acc += A[r * n + k] * B[k * n + c];
  C[r * n + c] = acc;
}
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float sA[16][16], sB[16][16];
  int tx = threadIdx.x, ty = threadIdx.y, r = blockIdx.y * 16 + ty, c = blockIdx.x * 16 + tx; float acc = 0.f;
  for (int t = 0; t < n; t += 16) {
    sA[ty][tx] = A[r * n + t + tx]; sB[ty][tx] = B[(t + ty) * n + c]; __syncthreads();
    for (int k = 0; k < 16; ++k) acc += sA[ty][k] * sB[k][tx];
    __syncthreads(); }
  C[r * n + c] = acc;
}
"""


@dataclass(frozen=True)
class KernelResult:
    experiment: str
    variant: str
    size: int                  # elements (or n of an n×n matrix)
    time_s: float              # median over the repeats (CUDA events)
    min_time_s: float
    bytes_moved: int           # useful bytes the variant must read + write (same for all variants of one experiment)
    bw_GBps: float | None
    pct_of_hbm: float | None   # of the datasheet HBM bandwidth (helpers.core.specs)
    tflops: float | None
    rate_per_s: float | None   # atomics: updates per second
    correct: bool
    device: str


def available() -> str | None:
    """None when cupy kernels can run here, else why not."""
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except ImportError:
        return "cupy is not installed (a GPU-only package): these kernels run on the H200"
    except Exception as e:  # noqa: BLE001
        return f"no CUDA GPU for cupy here ({type(e).__name__}): these kernels run on the H200"
    return None


def _ctx():
    why = available()
    if why:
        raise RuntimeError(why)
    import cupy as cp
    import torch

    from helpers.core import specs

    mod = cp.RawModule(code=SRC, options=("-std=c++14",))
    name = torch.cuda.get_device_name(0)
    s = specs.lookup(name, warn=False)
    return cp, mod, name, (float(s.hbm_GBps) if s else None)


def _time(fn, repeats: int = 20):
    return timing.time_fn(fn, device="cuda", warmup=3, repeats=repeats)


def _rec(exp, var, size, t, nbytes, hbm, dev, correct, flop=None, updates=None):
    bw = nbytes / t.median_s / 1e9 if nbytes else None
    return KernelResult(exp, var, size, t.median_s, t.min_s, nbytes, bw, None if (bw is None or not hbm) else
                        100 * bw / hbm, None if flop is None else flop / t.median_s / 1e12,
                        None if updates is None else updates / t.median_s, bool(correct), dev)


def memory_experiments(n: int = 2**28) -> list[KernelResult]:
    """copy (strides 1…32, then the float4 copy), transpose (3 variants), reduction (4 stages) on ``n`` fp32
    elements (1 GiB per array by default: at 256 MiB a 150 µs kernel still pays its ramp-up, and the copy reads
    76 % of the datasheet bandwidth instead of the ~86 % that torch's copy reaches on 1 GiB arrays)."""
    cp, mod, dev, hbm = _ctx()
    if n < 2**20 or n & (n - 1):
        raise ValueError(f"n={n}: use a power of two ≥ 2**20 (arrays must dwarf the 60 MB L2 to measure HBM)")
    x = cp.random.default_rng(0).standard_normal(n, dtype=cp.float32)
    y = cp.empty_like(x)
    out: list[KernelResult] = []
    k = mod.get_function("copy_perm")
    for stride in (1, 2, 4, 8, 32):
        f = lambda s=stride: k(((n + 255) // 256,), (256,), (x, y, np.uint32(n), np.uint32(s)))  # noqa: E731
        f()                                   # a permutation: same multiset of values, same sum
        ok = abs(float(y.sum()) - float(x.sum())) <= 1e-3 * float(cp.abs(x).sum())
        ok = ok and (stride != 1 or bool(cp.array_equal(x, y)))
        out.append(_rec("copy", f"stride {stride}", n, _time(f), 8 * n, hbm, dev, ok))
    kv = mod.get_function("copy_vec4")          # the same stride-1 copy, written for bandwidth (rule: wide, coalesced)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    f = lambda: kv(((n // 4 + 255) // 256,), (256,), (x, y, np.uint32(n // 4)))  # noqa: E731
    y.fill(0)
    f()
    out.append(_rec("copy", "stride 1, float4", n, _time(f), 8 * n, hbm, dev, bool(cp.array_equal(x, y))))
    side = 2 ** (int(np.log2(n)) // 2)                  # the largest square power-of-two matrix in n elements
    A = x[: side * side].reshape(side, side)
    B = cp.empty_like(A)
    for var in ("naive", "shared", "padded"):
        kt = mod.get_function(f"transpose_{var}")
        f = lambda kt=kt: kt((side // 32, side // 32), (32, 8), (A, B, np.int32(side)))  # noqa: E731
        f()
        out.append(_rec("transpose", var, side * side, _time(f), 8 * side * side, hbm, dev, bool(cp.array_equal(B, A.T))))
    acc = cp.zeros(1, dtype=cp.float32)
    want = float(x.astype(cp.float64).sum())
    tol = 1e-3 * float(cp.abs(x).sum())
    for var, grid, arg in (("1 interleaved tree", (n // 256,), n), ("2 sequential tree", (n // 256,), n),
                           ("3 warp shuffle", (n // 256,), n), ("4 float4 grid-stride", (sms * 8,), n // 4)):
        kr = mod.get_function({"1": "reduce_interleaved", "2": "reduce_sequential", "3": "reduce_shuffle",
                               "4": "reduce_vec4"}[var[0]])
        f = lambda kr=kr, g=grid, a=arg: kr(g, (256,), (x, acc, np.uint32(a)))  # noqa: E731
        acc.fill(0)
        f()
        ok = abs(float(acc[0]) - want) <= tol
        out.append(_rec("reduction", var, n, _time(f), 4 * n, hbm, dev, ok))    # acc keeps adding: timing only
    return out


def compute_experiments(n_div: int = 2**24, n_atomic: int = 2**24, n_mm: int = 4096,
                        chain: int = 1024) -> list[KernelResult]:
    """divergence, atomics under contention, and the matmul progression: naive → shared-memory tiles → Tensor
    Cores (Triton ``tl.dot``, bf16) → cuBLAS. ``chain`` FMAs per element make the divergence kernel arithmetic-bound
    (2·chain FLOPs per 8 bytes moved, far right of the ridge), so its time is set by the arithmetic the warp runs."""
    cp, mod, dev, hbm = _ctx()
    import torch

    out: list[KernelResult] = []
    x0 = cp.random.default_rng(1).standard_normal(n_div, dtype=cp.float32)
    kb = mod.get_function("branch")
    for var, per_warp in (("per lane (divergent)", 0), ("per warp (uniform)", 1)):
        x = x0.copy()
        f = lambda x=x, p=per_warp: kb(((n_div + 255) // 256,), (256,),  # noqa: E731
                                       (x, np.uint32(n_div), np.int32(p), np.int32(chain)))
        out.append(_rec("divergence", var, n_div, _time(f), 0, hbm, dev, True, flop=2 * chain * n_div))
    kc = mod.get_function("count")
    for nb in (1, 32, 1024, 65536):
        bins = cp.zeros(nb, dtype=cp.uint32)
        f = lambda b=bins, m=nb: kc(((n_atomic + 255) // 256,), (256,), (b, np.uint32(n_atomic), np.uint32(m)))  # noqa: E731
        f()
        ok = int(bins.sum()) == n_atomic
        out.append(_rec("atomics", f"{nb} counters", n_atomic, _time(f), 0, hbm, dev, ok, updates=n_atomic))
    for var in MATMULS:
        f, result, ref = matmul_call(var, n_mm)
        tol = 1e-3 * n_mm ** 0.5 + (2**-7 * float(ref.abs().max()) if "bf16" in var else 0)   # + bf16 output rounding
        ok = float((result().float() - ref).abs().max()) <= tol
        out.append(_rec("matmul", var, n_mm, _time(f, 5), 0, hbm, dev, ok, flop=2 * n_mm**3))
    return out


MATMULS = ("naive", "tiled", "cuBLAS (torch.mm, fp32)", "Triton tl.dot (bf16, Tensor Cores)", "cuBLAS (torch.mm, bf16)")


def matmul_call(var: str, n: int = 4096, seed: int = 2):
    """One matmul step on n×n inputs: (call, result, reference) — ``call()`` runs it once (what ``ncu`` profiles),
    ``result()`` returns C as a torch tensor, ``reference`` is the fp32 product of the same (bf16-rounded) inputs."""
    import torch

    if n % 16 or var not in MATMULS:
        raise ValueError(f"matmul {var!r} n={n}: n must be a multiple of 16 and the step one of {MATMULS}")
    cp, mod, _, _ = _ctx()
    g = cp.random.default_rng(seed)
    A, B = (g.standard_normal((n, n), dtype=cp.float32) for _ in range(2))
    C = cp.empty_like(A)
    tA, tB = torch.from_dlpack(A), torch.from_dlpack(B)
    hA, hB = tA.bfloat16(), tB.bfloat16()
    if var in ("naive", "tiled"):
        km = mod.get_function(f"matmul_{var}")
        call = lambda: km((n // 16, n // 16), (16, 16), (A, B, C, np.int32(n)))  # noqa: E731
        return call, lambda: (call(), torch.from_dlpack(C))[1], _fp32_mm(tA, tB)
    if var.startswith("cuBLAS") and "fp32" in var:
        call = lambda: _fp32_mm(tA, tB)  # noqa: E731
        return call, call, _fp32_mm(tA, tB)
    ref16 = _fp32_mm(hA.float(), hB.float())
    if var.startswith("Triton"):
        from helpers.kernels import tritonk             # Tensor Cores: bf16 tiles through tl.dot, fp32 accumulate
        call = lambda: tritonk.matmul(hA, hB, 128, 128, 64)  # noqa: E731
        return call, call, ref16
    call = lambda: torch.mm(hA, hB)  # noqa: E731
    return call, call, ref16


def profile_step(var: str, n: int = 4096) -> None:
    """Warm one matmul step up, then run it once between cudaProfilerStart/Stop (``ncu --profile-from-start off``)."""
    from helpers.core import device
    device.profile_once(matmul_call(var, n)[0])


def _fp32_mm(a, b):
    import torch

    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return torch.mm(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
