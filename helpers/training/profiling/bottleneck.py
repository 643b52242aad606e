"""Bottleneck analysis: where a training step's time goes, and how close each part runs to its ceiling (chapter 15).

The method: profile a few steps (``torch.profiler``; CUDA time on a GPU, CPU time otherwise), group the time by
operator, and put the operators that do matrix multiplies next to the GEMM ceiling that ``helpers.compute.gemm`` measured
on the same device. What is left — element-wise ops, reductions, the optimizer, copies — is memory- or
launch-bound, and the GEMM ceiling says nothing about it. Nsight Systems gives the same breakdown as a timeline
(``nsys profile``), Nsight Compute the per-kernel "speed of light" (``ncu``); chapter 15 shows the commands.

    step = bottleneck.mlp_step(batch=256, width=512, depth=3)
    rows = bottleneck.profile(step, gemm_ceiling_tflops=0.1)
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass

MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm", "aten::matmul")


@dataclass(frozen=True)
class OpShare:
    op: str
    category: str                # "matmul" or "other" (element-wise, reductions, optimizer, copies)
    calls_per_step: float
    time_per_step_s: float       # self time (CUDA time on a GPU)
    share: float                 # of the profiled self time
    flop_per_step: float         # the profiler's count (matmuls only; 0 where it counts none)
    tflops: float | None         # achieved rate of this op
    pct_of_gemm_ceiling: float | None


def mlp_step(batch: int = 256, width: int = 512, depth: int = 3, dtype: str = "fp32", device=None,
             seed: int = 0) -> Callable[[], float]:
    """One SGD training step of a ``depth``-layer GELU MLP of ``width`` on random data; returns the loss."""
    import torch

    if min(batch, width, depth) < 1:
        raise ValueError(f"batch={batch}, width={width}, depth={depth}: all must be ≥ 1")
    dev = torch.device(device or "cpu")
    tdt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    torch.manual_seed(seed)
    layers = [m for _ in range(depth) for m in (torch.nn.Linear(width, width), torch.nn.GELU())]
    model = torch.nn.Sequential(*layers).to(dev, tdt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device=dev, dtype=tdt)

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        return loss.detach()

    return step


@contextlib.contextmanager
def _quiet_stderr():
    """Kineto prints two "USDT … profiler_start/stop" lines on fd 2 that carry no information: silence them."""
    try:
        saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:
        yield
        return
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def profile(step: Callable, steps: int = 3, device=None, gemm_ceiling_tflops: float | None = None,
            top: int = 10) -> list[OpShare]:
    """Profile ``steps`` calls of ``step`` after one warm-up; the ``top`` operators by self time, per step."""
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile

    if steps < 1:
        raise ValueError(f"steps={steps}: profile at least one step")
    on_gpu = str(device or "cpu").startswith("cuda")
    step()                                            # warm-up: allocator, kernels, autotuning
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with _quiet_stderr(), tprofile(activities=acts, with_flops=True) as prof:
        for _ in range(steps):
            step()
        if on_gpu:
            torch.cuda.synchronize()

    def self_us(e):
        if on_gpu:
            return getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0.0))
        return e.self_cpu_time_total

    events = [e for e in prof.key_averages() if self_us(e) > 0]
    total_us = sum(self_us(e) for e in events) or 1.0
    rows = []
    for e in sorted(events, key=self_us, reverse=True)[:top]:
        t = self_us(e) / 1e6 / steps
        flop = float(e.flops or 0) / steps
        mm = e.key in MATMUL_OPS or (flop > 0 and "mm" in e.key)
        tf = flop / t / 1e12 if mm and flop > 0 else None
        pct = 100 * tf / gemm_ceiling_tflops if tf is not None and gemm_ceiling_tflops else None
        rows.append(OpShare(e.key, "matmul" if mm else "other", e.count / steps, t, self_us(e) / total_us, flop, tf, pct))
    return rows


def summary(rows: list[OpShare]) -> dict:
    """Share of time in matmuls, their combined rate, and the share in everything else (of the rows given)."""
    mm = [r for r in rows if r.category == "matmul"]
    t_mm = sum(r.time_per_step_s for r in mm)
    f_mm = sum(r.flop_per_step for r in mm)
    return {"matmul_share": sum(r.share for r in mm), "other_share": sum(r.share for r in rows if r.category != "matmul"),
            "matmul_tflops": f_mm / t_mm / 1e12 if t_mm else None}
