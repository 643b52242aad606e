"""One place for timing code on CPU and GPU (used by every benchmark in the book; taught in chapter 15).

GPU work is asynchronous: a host clock read right after a launch measures the launch, not the work. So on
CUDA we record events around each call and synchronise before reading them; on CPU we use
``time.perf_counter``. Every timing warms up first (module load, allocator, cuBLAS handle and autotuning stay
out of the numbers), then repeats and reports min / median / max.

    t = time_fn(lambda: a @ b, device=dev, warmup=3, repeats=10)
    t.median_s, t.min_s

Launch overhead is timed away with a CUDA Graph: ``replay, out = cuda_graph(fn, inner=50)`` captures 50 calls and
replays them as one launch (chapters 15 and 25).

Imports no other helper.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    min_s: float
    median_s: float
    max_s: float
    mean_s: float
    repeats: int
    warmup: int
    clock: str          # "cuda-events" or "perf_counter"

    def __post_init__(self):
        if not (0 <= self.min_s <= self.median_s <= self.max_s):
            raise ValueError(f"inconsistent timing: min {self.min_s}, median {self.median_s}, max {self.max_s}")


def _is_cuda(device) -> bool:
    return device is not None and str(device).startswith("cuda")


def sync(device=None) -> None:
    """Wait for all queued work on ``device`` (no-op on CPU)."""
    if _is_cuda(device):
        import torch

        torch.cuda.synchronize(device)


def time_fn(fn: Callable[[], object], *, device=None, warmup: int = 3, repeats: int = 10,
            setup: Callable[[], object] | None = None) -> Timing:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls.

    ``setup`` (optional) runs before every call, untimed: use it to flush caches or reset outputs.
    On a CUDA ``device`` each call is bracketed by CUDA events; otherwise by ``perf_counter``."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats={repeats} must be ≥ 1 and warmup={warmup} ≥ 0")
    for _ in range(warmup):
        if setup:
            setup()
        fn()
    sync(device)
    times = []
    if _is_cuda(device):
        import torch

        for _ in range(repeats):
            if setup:
                setup()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        clock = "cuda-events"
    else:
        for _ in range(repeats):
            if setup:
                setup()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        clock = "perf_counter"
    return Timing(min(times), statistics.median(times), max(times), statistics.fmean(times),
                  repeats, warmup, clock)


def cuda_graph(fn: Callable[[], object], inner: int = 1, warmup: int = 3):
    """Capture ``inner`` calls of ``fn`` in one CUDA Graph; returns ``(replay, out)``: ``replay()`` launches them all
    at once, ``out`` is what the last captured call returned (its memory belongs to the graph and each replay
    rewrites it). ``warmup`` calls run first on a side stream, as PyTorch's CUDA Graphs notes require
    (https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs). Raises whatever capture raises: callers that
    can do without a graph catch it and say so."""
    import torch

    if inner < 1 or warmup < 0:
        raise ValueError(f"inner={inner} must be ≥ 1 and warmup={warmup} ≥ 0")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    out = None
    with torch.cuda.graph(g):
        for _ in range(inner):
            out = fn()
    return g.replay, out
