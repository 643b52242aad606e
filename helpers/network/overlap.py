"""Communication overlapped with computation, read from a ``torch.profiler`` trace (chapter 8).

Two ranks each run one "step" twice: *serial* (all-reduce a gradient-sized tensor, wait, then compute) and
*overlapped* (start the all-reduce with ``async_op=True``, compute, then ``wait()``). Each step runs under
``torch.profiler``; the trace is exported as Chrome-trace JSON (the file Perfetto and ``chrome://tracing`` open)
and read back: the all-reduce is the backend's own event (``gloo:all_reduce`` on its worker thread, NCCL's
``ncclDevKernel_AllReduce…`` on a GPU stream), the computation is a ``record_function("compute")`` range on CPU or
the compute kernels on a GPU. The overlap is the time both intervals cover — measured, not assumed.

    python -m helpers overlap --world-size 2 --json               (spawns the ranks itself)
    torchrun --nproc_per_node=2 -m helpers overlap --json         (the same worker under the real launcher)
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass

COMM = re.compile(r"(gloo|nccl).*all_?reduce", re.I)


@dataclass(frozen=True)
class Interval:
    name: str
    lane: str          # "main thread", "comm thread", "GPU stream 7", ...
    start_s: float     # from the trace's first event
    dur_s: float


@dataclass(frozen=True)
class OverlapResult:
    variant: str       # "serial" or "overlapped"
    step_s: float      # the whole step, from the trace
    comm_s: float      # union of the all-reduce intervals
    compute_s: float   # union of the compute intervals
    overlap_s: float   # time covered by both
    hidden_fraction: float   # overlap_s / comm_s
    correct: bool      # the all-reduced tensor holds the sum over ranks
    backend: str


def _union(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def covered(iv) -> float:
    """Total length of a set of (start, end) intervals, overlaps counted once."""
    return sum(b - a for a, b in _union(list(iv)))


def intersection(x, y) -> float:
    """Length of the time covered by both interval sets."""
    total = 0.0
    for a, b in _union(list(x)):
        for c, d in _union(list(y)):
            total += max(0.0, min(b, d) - max(a, c))
    return total


def read_trace(path: str) -> tuple[list[Interval], dict[str, float]]:
    """Complete ('X') events of a Chrome trace: the step, the all-reduce and the compute intervals, in seconds."""
    with open(path, encoding="utf-8") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    if not events:
        raise ValueError(f"{path}: no complete events in the trace — was the profiler running around the step?")
    t0 = min(float(e["ts"]) for e in events)
    main_tid = next((e["tid"] for e in events if e["name"] == "step"), None)
    out, spans = [], {"step": [], "comm": [], "compute": []}
    for e in events:
        name, cat = e["name"], e.get("cat", "")
        kind = ("step" if name == "step" else "comm" if COMM.search(name)
                else "compute" if name == "compute" or (cat == "kernel" and "nccl" not in name.lower()) else None)
        if kind is None:
            continue
        a = (float(e["ts"]) - t0) * 1e-6
        spans[kind].append((a, a + float(e["dur"]) * 1e-6))
        lane = (f"GPU stream {e['tid']}" if cat == "kernel" else
                "main thread" if e["tid"] == main_tid else f"thread {e['tid']}")
        out.append(Interval(name if kind != "compute" or cat != "kernel" else "compute kernel", lane, a,
                            float(e["dur"]) * 1e-6))
    return out, {k: v for k, v in spans.items()}


def one_step(x, a, iters: int, overlapped: bool, dev):
    """The step being profiled: the all-reduce of ``x`` and ``iters`` dependent matmuls on ``a``."""
    import torch
    import torch.distributed as dist
    from torch.profiler import record_function

    with record_function("step"):
        work = dist.all_reduce(x, async_op=True)
        if not overlapped:
            work.wait()
        with record_function("compute"):
            for _ in range(iters):
                a = torch.tanh(a @ a)
        if overlapped:
            work.wait()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    return a


def worker(ctx, numel: int = 2**21, iters: int = 30, n: int = 256):
    """Rank body (``launch.run``): each variant once as warm-up, then once under the profiler."""
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(1)
    dev = torch.device(ctx.device)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    res, lanes = [], {}
    for variant in ("serial", "overlapped"):
        g = torch.Generator().manual_seed(0)
        a0 = (torch.randn(n, n, generator=g) / n ** 0.5).to(dev)
        one_step(torch.ones(numel, device=dev), a0, iters, variant == "overlapped", dev)      # warm-up
        x = torch.full((numel,), float(ctx.rank + 1), device=dev)
        dist.barrier()
        with profile(activities=acts) as prof:
            one_step(x, a0, iters, variant == "overlapped", dev)
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            prof.export_chrome_trace(path)
            ivs, spans = read_trace(path)
        finally:
            os.unlink(path)
        want = ctx.world_size * (ctx.world_size + 1) / 2
        comm, comp = spans["comm"], spans["compute"]
        c = covered(comm)
        ov = intersection(comm, comp)
        res.append(OverlapResult(variant, covered(spans["step"]), c, covered(comp), ov, ov / c if c else 0.0,
                                 bool((x == want).all()), ctx.backend))
        lanes[variant] = ivs
    return res, lanes


def run(world_size: int = 2, numel: int = 2**21, iters: int = 30, timeout_s: float = 120,
        backend: str | None = None):
    """``world_size`` ranks (``launch.run``: spawned, or torchrun's); rank 0's records and trace intervals."""
    from helpers.core import launch

    r = launch.run(worker, world_size, numel, iters, backend=backend, timeout_s=timeout_s)
    recs, lanes = r.results[0]
    return recs, lanes, r.backend_reason


def main(argv: list[str] | None = None) -> int:
    import argparse

    from helpers.core import cli, launch, results

    ap = argparse.ArgumentParser(prog="python -m helpers.network.overlap", description=__doc__.split("\n")[0])
    launch.add_args(ap, 2, min_ranks=2)
    ap.add_argument("--numel", type=cli.positive_int, default=2**21)
    ap.add_argument("--iters", type=cli.positive_int, default=30)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs, _, why = run(a.world_size, a.numel, a.iters, a.timeout, a.backend)
    if launch.is_leader() and not a.json:      # with --json, stdout is the JSON document alone
        print(why)
    launch.emit(recs, "overlap", a, backend_reason=why)
    return 0 if all(r.correct for r in recs) else 1


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
