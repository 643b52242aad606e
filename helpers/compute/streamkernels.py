"""The STREAM kernels written by hand in CUDA and run through cupy: ``helpers.compute.membw``'s ``cupy`` backend
(chapter 25 reads their source; chapter 15 times them).

Grid-stride loops over float4 (16-byte vector loads and stores), ILP independent vectors per thread per iteration so
several loads are in flight, a scalar tail for n % 4, and a two-stage dot (per-block partial sums by warp shuffles,
then one block sums the partials) — issue 11. ``verify_cupy`` checks every kernel against numpy before any timing.

    streamkernels.cupy_status()          # None where cupy can run kernels, else the one-line reason
    streamkernels.verify_cupy()          # {op: largest relative error against numpy}
"""
from __future__ import annotations

import numpy as np

Q = 3.0                                      # STREAM's scalar
ILP = 4
THREADS = 256
BLOCKS_PER_SM = 8
SRC = r"""
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


def cupy_ops(a, b, c):
    import cupy as cp

    mod = cp.RawModule(code=SRC, options=("-std=c++14",))
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
    ops = cupy_ops(a, b, c)
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
