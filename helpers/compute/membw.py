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
costs) and ``cupy`` (GPU, when installed: the hand-written CUDA kernels of ``helpers.compute.streamkernels``).
On a GPU the cache level is timed as a CUDA Graph of many launches (``helpers.core.timing.cuda_graph``; a single
8 MiB kernel is shorter than its launch); if capture fails the eager loop is used and ``note`` says the figure is a
launch-bound lower bound.

    python -m helpers bench membw --json         # the CLI lives in helpers.compute.bench
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from helpers.core import timing
from helpers.compute import streamkernels
from helpers.compute.peaks import device_name, llc_bytes, peak

# words moved and FLOPs per element, as STREAM counts them
OPS = {"copy": (2, 0), "scale": (2, 1), "add": (3, 1), "triad": (3, 2), "dot": (2, 2)}
Q = streamkernels.Q                          # STREAM's scalar, the same in the cupy kernels


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
            why = "cupy runs on a GPU only" if not on_gpu else streamkernels.cupy_status()
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
                    kernels = streamkernels.cupy_ops(*(cp.from_dlpack(x) for x in (a, b, c)))
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
                            fn, note = timing.cuda_graph(kernels[op], inner)[0], f"CUDA Graph of {inner} launches"
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
