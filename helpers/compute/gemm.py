"""GEMM ceiling: the largest matrix-multiply rate this device reaches, MAMF-style (chapter 15; roofline in 28).

The method is ml-engineering's *Maximum Achievable Matmul FLOPS* finder (stas00/ml-engineering,
compute/accelerator/benchmarks/mamf-finder.py, benchmark version 2):

* inputs are ``randn`` (data changes power draw: zeros run faster than random numbers);
* the timed call is ``torch.mm(A, B.T, out=C)`` with ``A`` (m, k) and ``B`` (n, k), FLOPs = 2·m·n·k;
* before every iteration, untimed: zero a buffer larger than the last-level cache (256 MiB on a GPU, which
  covers every GPU's L2; 2 × the LLC on a CPU) so no operand is still cached, and re-randomise ``C`` so the
  output is really written;
* warm-up iterations first (50 in MAMF), then timed ones (100 in MAMF), each bracketed by CUDA events on a GPU
  (through ``helpers.core.timing.time_fn``); the fastest gives the *best* rate, the median the *typical* one.

Here the iteration counts shrink for slow shapes so that a sweep fits a time budget (never fewer than 10
timed iterations on a GPU, 5 on a CPU), and every shape is also timed the "plain" way — ``torch.matmul(A, B.T)``: no ``out=``, no
cache flush — so the ratio MAMF / plain shows the method costs nothing. FP8 goes through ``torch._scaled_mm`` (unit scales,
bf16 output) where the GPU has FP8 Tensor Cores;
the "sustained" method runs the same GEMM back to back for ``sustain_s`` seconds with no flush — the rate a training
step sees once the GPU sits at its power cap — and on a GPU every record carries the SM clock, power and throttle
reasons that ``helpers.core.gpusampler`` sampled while it ran (so a rate is never quoted without its clock); TF32 is fp32 storage with ``torch.set_float32_matmul_precision
("high")`` on a GPU. % of peak uses ``helpers.compute.peaks`` (the datasheet's dense figure); a CPU has no row there,
so its ``pct_of_peak`` is null with the reason in ``peak_note``.

    python -m helpers bench gemm --json          # the CLI lives in helpers.compute.bench
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import torch

from helpers.core import timing
from helpers.compute import peaks
from helpers.formulas import flops

DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
          "fp8": getattr(torch, "float8_e4m3fn", None)}
GPU_FLUSH_BYTES = 256 * 2**20
CPU_FLUSH_MAX_BYTES = 256 * 2**20      # a CPU flushes 2 × its LLC, at most this
GPU_SHAPES = ((4096, 4096, 4096), (8192, 8192, 8192), (16384, 8192, 8192))
CPU_SHAPES = ((256, 256, 256), (512, 512, 512), (1024, 1024, 1024))
# a MAMF-like sweep (ml-engineering sweeps m, n, k over ranges; the best shapes of the H200 calibration in issue 11
# were 4096×4096×13312 for bf16 and 4096×8192×8192 for fp8): `bench gemm --sweep`
# (the likeliest best shapes first, while the GPU is coolest)
GPU_SWEEP = ((4096, 4096, 13312), (4096, 8192, 8192), (4096, 4096, 8192), (4096, 4096, 4096),
             (8192, 8192, 8192), (8192, 8192, 13312), (4096, 16384, 8192), (16384, 8192, 8192))


@dataclass(frozen=True)
class GemmResult:
    kind: str                 # "gemm"
    method: str               # "mamf": torch.mm(A, B.T, out=C), cache flushed · "plain": matmul, no flush ·
                              # "sustained": the MAMF call back to back for sustain_s, no flush (batches of calls)
    dtype: str
    m: int
    n: int
    k: int
    shape: str                # "m×n×k"
    flop: float               # 2·m·n·k
    time_s: float             # fastest timed iteration
    median_time_s: float
    tflops: float             # from the fastest iteration (MAMF's "max")
    median_tflops: float
    peak_tflops: float | None
    pct_of_peak: float | None  # 100 · tflops / peak_tflops
    peak_note: str            # where the peak comes from, or why there is none
    repeats: int
    warmup: int
    device: str
    # sampled by NVML during this record's timed calls (None on a CPU or where NVML cannot answer; see sampler_note)
    sm_clock_MHz_median: float | None = None
    sm_clock_MHz_min: float | None = None
    power_W_median: float | None = None
    power_W_max: float | None = None
    power_source: str | None = None  # "instant" (NVML field 186) or "average" (NVML's ~1 s window)
    power_valid: bool | None = None  # False: < 3 samples, or an averaged reading over a run shorter than its window
    power_samples: int | None = None
    throttle_reasons: tuple = ()
    sampler_note: str = ""
    calls_per_timing: int = 1    # sustained: GEMMs per timed batch (time_s is per GEMM)


def unsupported(dtype: str, dev: torch.device) -> str | None:
    """Why ``dtype`` cannot be benchmarked on ``dev`` (None when it can)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r}: use one of {sorted(DTYPES)}")
    if dtype == "tf32" and dev.type != "cuda":
        return "tf32 is a Tensor Core mode of NVIDIA GPUs (Ampere and later); a CPU computes fp32"
    if dtype == "fp8":
        if DTYPES["fp8"] is None or not hasattr(torch, "_scaled_mm"):
            return f"torch {torch.__version__} has no float8_e4m3fn / torch._scaled_mm"
        if dev.type != "cuda":
            return ("fp8 GEMM on a CPU is emulated in software (seconds per 512³ product): it measures no hardware, "
                    "so it is skipped; chapter 2 checks fp8's rounding on the CPU instead")
        if torch.cuda.get_device_capability(dev) < (8, 9):
            cc = torch.cuda.get_device_capability(dev)
            return f"fp8 Tensor Cores need compute capability ≥ 8.9 (Ada/Hopper); this GPU is {cc[0]}.{cc[1]}"
    return None


@contextlib.contextmanager
def _matmul_precision(dtype: str):
    """TF32 on for "tf32", strict fp32 otherwise; the previous setting comes back afterwards."""
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if dtype == "tf32" else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(old)


def _operands(m: int, n: int, k: int, dtype: str, dev: torch.device, seed: int):
    """A (m, k), B (n, k) from randn, C (m, n) and its random refill, cast to ``dtype``."""
    g = torch.Generator(device=dev).manual_seed(seed)
    tdt = DTYPES[dtype]
    store = torch.bfloat16 if dtype == "fp8" else tdt
    A = torch.randn(m, k, device=dev, generator=g).to(tdt)
    B = torch.randn(n, k, device=dev, generator=g).to(tdt)
    C = torch.empty(m, n, device=dev, dtype=store)
    C_rand = torch.randn(m, n, device=dev, generator=g).to(store)
    return A, B, C, C_rand


def _calls(A, B, C, dtype: str, plain_layout: str = "nt"):
    """(mamf_call, plain_call) for one shape. fp8 has no plain matmul: both go through _scaled_mm.

    ``plain_layout`` "nt" times ``torch.matmul(A, B.T)`` (the same operands as MAMF, so the ratio isolates the
    method); "nn" times ``A @ B2`` with B2 = B.T made contiguous, (k, n) row-major — the layout most code has."""
    if plain_layout not in ("nt", "nn"):
        raise ValueError(f"plain_layout={plain_layout!r}: use 'nt' (A @ B.T) or 'nn' (A @ B2, B2 (k, n))")
    if dtype == "fp8":
        one = torch.ones(1, device=A.device, dtype=torch.float32)      # tensor-wise scale, as MAMF passes it
        mm = lambda: torch._scaled_mm(A, B.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        return mm, mm
    Bp = B.t() if plain_layout == "nt" else B.t().contiguous()
    return (lambda: torch.mm(A, B.t(), out=C)), (lambda: torch.matmul(A, Bp))


def _counts(fn, dev, budget_s: float, warmup: int, repeats: int, min_repeats: int, setup=None) -> tuple[int, int]:
    """MAMF's warm-up/timed counts, shrunk so one (shape, method) takes about ``budget_s`` — the untimed cache
    flush before each call included, which on a CPU costs more than a small GEMM."""
    fn()
    timing.sync(dev)
    t0 = time.perf_counter()
    if setup is not None:
        setup()
    fn()
    timing.sync(dev)
    est = max(time.perf_counter() - t0, 1e-6)
    fit = int(budget_s / est)
    return max(1, min(warmup, fit // 3)), max(min_repeats, min(repeats, fit - fit // 3))


def _sampled(dev, fn):
    """Run ``fn()`` under an NVML sampler on a GPU; returns (fn's result, the sampler's summary fields)."""
    from helpers.core import gpusampler

    if dev.type != "cuda":
        return fn(), {"sampler_note": "CPU run: no GPU clock or power to sample"}
    with gpusampler.Sampler.for_torch_device(dev) as smp:
        out = fn()
    sm = smp.summary()
    return out, {"sm_clock_MHz_median": sm["sm_clock_MHz_median"], "sm_clock_MHz_min": sm["sm_clock_MHz_min"],
                 "power_W_median": sm["power_W_median"], "power_W_max": sm["power_W_max"],
                 "power_source": sm["power_source"], "power_valid": sm["power_valid"], "power_samples": sm["samples"],
                 "throttle_reasons": tuple(sm["throttle_reasons"]), "sampler_note": sm["sampler_note"]}


def _mamf_and_plain(mamf, plain, flush, C, C_rand, dev, shape, dtype, pk, note, name, budget_s, warmup, repeats):
    def reset():
        flush.zero_()                    # evict A, B, C from the cache …
        C.copy_(C_rand)                  # … and make the output write real again

    m, n, k = shape
    flop, on_gpu = flops.gemm_flops(m, n, k), dev.type == "cuda"
    tdev = dev if on_gpu else None
    out = []
    for method, fn, setup in (("mamf", mamf, reset), ("plain", plain, None)):
        w, r = _counts(fn, dev, budget_s, warmup, repeats, 10 if on_gpu else 5, setup)
        t, smp = _sampled(dev, lambda: timing.time_fn(fn, device=tdev, warmup=w, repeats=r, setup=setup))
        best, med = flop / t.min_s / 1e12, flop / t.median_s / 1e12
        out.append(GemmResult("gemm", method, dtype, m, n, k, f"{m}×{n}×{k}", flop, t.min_s, t.median_s, best, med,
                              pk, None if pk is None else 100 * best / pk, note, r, w, name, **smp))
    return out


def _sustained(mamf, plain, flush, C, C_rand, dev, shape, dtype, pk, note, name, sustain_s, warmup, repeats):
    """The MAMF call back to back, no flush, in batches of about 50 ms for ``sustain_s`` seconds."""
    m, n, k = shape
    flop = flops.gemm_flops(m, n, k)
    tdev = dev if dev.type == "cuda" else None
    _, per = _counts(mamf, dev, 0.05, 1, 10**6, 1)
    batch = lambda: [mamf() for _ in range(per)]  # noqa: E731
    _, nb = _counts(batch, dev, sustain_s, 1, 10**6, 3)
    t, smp = _sampled(dev, lambda: timing.time_fn(batch, device=tdev, warmup=1, repeats=nb))
    best, med = flop * per / t.min_s / 1e12, flop * per / t.median_s / 1e12
    return [GemmResult("gemm", "sustained", dtype, m, n, k, f"{m}×{n}×{k}", flop, t.min_s / per, t.median_s / per,
                       best, med, pk, None if pk is None else 100 * best / pk, note, nb, 1, name,
                       calls_per_timing=per, **smp)]


def measure(dtypes=("fp32", "bf16"), shapes=None, device=None, warmup: int = 50, repeats: int = 100,
            budget_s: float | None = None, warm_s: float | None = None, seed: int = 0,
            plain_layout: str = "nt", skipped: list | None = None,
            sustain_s: float | None = None, cool_s: float = 5.0) -> list[GemmResult]:
    """MAMF and plain GEMM timings for every (dtype, shape), plus the sustained rate where ``sustain_s`` > 0
    (default: 1.0 s on a GPU, 0 — no sustained record — on a CPU). Returns two or three records per pair. On a
    GPU, ``cool_s`` seconds of idle separate two dtypes, so the second does not start at the power cap.

    ``shapes`` defaults to GPU_SHAPES on a GPU and CPU_SHAPES on a CPU; ``budget_s`` (seconds per shape and
    method) to 1.0 on a GPU and 0.3 on a CPU; ``warm_s`` (seconds of untimed GEMMs before the sweep, which
    brings a GPU to its working clock; MAMF uses 30) to 2.0 on a GPU and 0 on a CPU. Dtypes this device cannot
    run are skipped, and ``(dtype, reason)`` is appended to ``skipped`` when a list is given."""
    from helpers.core.device import pick_device

    dev = pick_device()[0] if device is None else torch.device(device)
    on_gpu = dev.type == "cuda"
    shapes = tuple(shapes or (GPU_SHAPES if on_gpu else CPU_SHAPES))
    budget_s = budget_s if budget_s is not None else (1.0 if on_gpu else 0.3)
    warm_s = warm_s if warm_s is not None else (2.0 if on_gpu else 0.0)
    sustain_s = sustain_s if sustain_s is not None else (1.0 if on_gpu else 0.0)
    if sustain_s < 0:
        raise ValueError(f"sustain_s={sustain_s}: use 0 (no sustained record) or a positive number of seconds")
    for m, n, k in shapes:
        if min(m, n, k) < 16 or any(x % 16 for x in (m, n, k)):
            raise ValueError(f"shape {m}×{n}×{k}: use multiples of 16 (fp8 Tensor Cores require it)")
    name = peaks.device_name(dev)
    # on a CPU, twice the last-level cache — capped: a virtual machine reports its host's whole L3 (480 MiB seen
    # here), of which two cores hold only a share, and zeroing a GiB before every call would be the whole benchmark
    nbytes = GPU_FLUSH_BYTES if on_gpu else min(2 * peaks.llc_bytes(), CPU_FLUSH_MAX_BYTES)
    flush = torch.empty(nbytes // 4, dtype=torch.int32, device=dev)
    out: list[GemmResult] = []
    warmed = warm_s <= 0
    for dtype in dtypes:
        why = unsupported(dtype, dev)
        if why:
            if skipped is not None:
                skipped.append((dtype, why))
            continue
        pk, note = peaks.peak(name, "fp8" if dtype == "fp8" else dtype)
        if on_gpu and cool_s > 0 and warm_s <= 0:
            time.sleep(cool_s)                           # start each dtype cool (whatever ran before was hot)
        with _matmul_precision(dtype):
            # MAMF and plain for every shape first, then the sustained runs: a sustained run heats the GPU to its
            # power cap, which would lower the clock of the MAMF runs after it
            for phase in ("mamf", "sustained"):
                if phase == "sustained" and sustain_s <= 0:
                    break
                for i, (m, n, k) in enumerate(shapes):
                    A, B, C, C_rand = _operands(m, n, k, dtype, dev, seed + i)
                    mamf, plain = _calls(A, B, C, dtype, plain_layout)
                    if not warmed:                       # bring the GPU to its working clock once
                        t_end = time.perf_counter() + warm_s
                        while time.perf_counter() < t_end:
                            mamf()
                            timing.sync(dev)
                        warmed = True
                    out += (_mamf_and_plain if phase == "mamf" else _sustained)(
                        mamf, plain, flush, C, C_rand, dev, (m, n, k), dtype, pk, note, name,
                        budget_s if phase == "mamf" else sustain_s, warmup, repeats)
                    del A, B, C, C_rand
        if on_gpu and cool_s > 0 and warm_s > 0 and dtype != dtypes[-1]:
            time.sleep(cool_s)                           # let power and clocks recover before the next dtype
    return out


def best(records, dtype: str, method: str = "mamf"):
    """The record with the highest best-iteration TFLOP/s for ``dtype`` and ``method`` (None if absent)."""
    rs = [r for r in records if _get(r, "kind") == "gemm" and _get(r, "dtype") == dtype
          and _get(r, "method") == method]
    return max(rs, key=lambda r: _get(r, "tflops"), default=None)


def ratio_to_plain(records, dtype: str) -> float | None:
    """Best MAMF TFLOP/s ÷ best plain-matmul TFLOP/s over the same shapes in the same run."""
    a, b = best(records, dtype, "mamf"), best(records, dtype, "plain")
    return None if a is None or b is None else _get(a, "tflops") / _get(b, "tflops")


def _get(r, key):
    return r[key] if isinstance(r, dict) else getattr(r, key)
