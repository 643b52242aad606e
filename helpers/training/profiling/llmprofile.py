"""Where a training step's time goes (chapter 18): data / forward / backward / optimizer, and the kernel time by kind.

Two views over a few extra steps after the timed ones (so the timing itself is not perturbed):

* phases — device-side timestamps (CUDA events; ``perf_counter`` on the CPU) around getting the batch, the forward
  with the loss, the backward and the optimizer step; medians in ms;
* kernels — ``torch.profiler``'s device time summed by kind: matmul (cuBLAS / CUTLASS / nvjet GEMMs), attention
  (flash, cuDNN, memory-efficient kernels), optimizer (fused AdamW), other (elementwise, norms, copies, Triton
  fusions); on the CPU the self time of the aten operators, by the same kinds. ``busy_fraction`` is the kernel
  time over the wall time of the profiled steps: below 1, the GPU waited for the host.
"""
from __future__ import annotations

import statistics
import time

import torch

KINDS = {
    "attention": ("flash", "fmha", "attention", "sdpa", "attn", "cudnn"),
    "matmul": ("gemm", "nvjet", "cutlass", "xmma", "cublas", "matmul", "aten::mm", "aten::addmm", "aten::bmm",
               "sm90_", "sm100_", "ampere_", "_mm_", "::mm"),
    "optimizer": ("adam", "multi_tensor", "foreach"),
}


def kind_of(name: str) -> str:
    """The kind of a kernel or operator, from its name (attention first: some attention kernels say "gemm")."""
    n = name.lower()
    for kind, keys in KINDS.items():
        if any(k in n for k in keys):
            return kind
    return "other"


class _Clock:
    """Timestamps: CUDA events on a GPU (read after one synchronisation), perf_counter on the CPU."""

    def __init__(self, dev):
        self.cuda = dev.type == "cuda"

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b) -> float:
        return a.elapsed_time(b) if self.cuda else (b - a) * 1e3


def phases(step_parts, dev, steps: int = 3) -> dict:
    """Median ms of each phase over ``steps`` steps. ``step_parts`` = (data, forward, backward, optimizer), each a
    callable: data() → batch, forward(batch) → loss, backward(loss), optimizer()."""
    data, forward, backward, opt = step_parts
    clock, rows = _Clock(dev), []
    for _ in range(steps):
        t = [clock.mark()]
        batch = data()
        t.append(clock.mark())
        loss = forward(batch)
        t.append(clock.mark())
        backward(loss)
        t.append(clock.mark())
        opt()
        t.append(clock.mark())
        rows.append(t)
    if clock.cuda:
        torch.cuda.synchronize()
    names = ("data_ms", "forward_ms", "backward_ms", "optimizer_ms")
    return {n: round(statistics.median(clock.ms(r[i], r[i + 1]) for r in rows), 3) for i, n in enumerate(names)}


def kernels(step, dev, steps: int = 2) -> dict:
    """Kernel (GPU) or operator self (CPU) time by kind over ``steps`` calls of ``step()``, in ms per step, with
    the share of each kind and the busy fraction of the device."""
    from torch.profiler import ProfilerActivity, profile

    cuda = dev.type == "cuda"
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - t0) * 1e3
    by_kind = dict.fromkeys((*KINDS, "other"), 0.0)
    if cuda:
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.elapsed_us() > 0:
                by_kind[kind_of(e.name)] += e.time_range.elapsed_us() / 1e3
    else:
        for e in prof.key_averages():
            if e.key.startswith("aten::"):
                by_kind[kind_of(e.key)] += e.self_cpu_time_total / 1e3
    total = sum(by_kind.values())
    return {"kernel_ms_per_step": {k: round(v / steps, 3) for k, v in by_kind.items()},
            "kernel_share": {k: round(v / total, 3) if total else None for k, v in by_kind.items()},
            "busy_fraction": round(total / wall_ms, 3) if wall_ms else None,
            "measured_on": "GPU kernels (torch.profiler, CUDA activity)" if cuda else "CPU aten operators, self time"}
