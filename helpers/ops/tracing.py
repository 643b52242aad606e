"""A PyTorch profiler trace of one training step, summarised as the top operators table (chapter 12, "Tracing").

The same code traces the GPU when there is one (CUDA kernels appear as their own rows, timed by CUPTI) and the CPU
otherwise; the Chrome trace it writes opens in chrome://tracing or Perfetto. Nsight Systems (``nsys profile``) gives
the whole-system timeline on a GPU machine; the profiler is what runs everywhere.

    from helpers.ops import tracing
    top, trace_bytes = tracing.profile_step(steps=3)     # DataFrame of the top ops, size of the Chrome trace
"""
from __future__ import annotations

import contextlib
import os
import tempfile


@contextlib.contextmanager
def _quiet_fd2():
    """The profiler's C++ layer prints diagnostics straight to file descriptor 2; keep them out of the notebook."""
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def profile_step(steps: int = 3, batch: int = 32, width: int = 256, top: int = 8, seed: int = 0):
    """Profile ``steps`` training steps of a 3-layer MLP (forward, backward, AdamW) after one warm-up step."""
    import pandas as pd
    import torch
    from torch.profiler import ProfilerActivity, profile

    from helpers.core import device

    dev, _ = device.pick_device()
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width),
                                torch.nn.GELU(), torch.nn.Linear(width, 10)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(batch, width, device=dev), torch.randint(0, 10, (batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    step()                                                     # warm-up: allocations, lazy init
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    fd, path = tempfile.mkstemp(suffix=".json", prefix="trace-")
    os.close(fd)
    try:
        with _quiet_fd2():
            with profile(activities=acts, record_shapes=True) as prof:
                for _ in range(steps):
                    step()
                if dev.type == "cuda":
                    torch.cuda.synchronize()
            prof.export_chrome_trace(path)
        size = os.path.getsize(path)
    finally:
        os.unlink(path)
    key = "self_device_time_total" if dev.type == "cuda" else "self_cpu_time_total"
    rows = []
    for e in prof.key_averages():
        rows.append({"op": e.key, "calls": e.count, "self_cpu_us": e.self_cpu_time_total,
                     "cpu_total_us": e.cpu_time_total,
                     "self_device_us": getattr(e, "self_device_time_total", 0.0) if dev.type == "cuda" else 0.0})
    df = pd.DataFrame(rows)
    sort = "self_device_us" if key == "self_device_time_total" else "self_cpu_us"
    df = df.sort_values(sort, ascending=False).head(top).reset_index(drop=True)
    df.attrs.update(device=str(dev), steps=steps, sorted_by=sort)
    return df, size
