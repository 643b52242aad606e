"""Operator fusion, counted: how many kernels eager PyTorch runs for a chain of operations, how many TorchInductor
(``torch.compile``) generates for the same code, and the bytes each way has to move (chapter 10).

Eager mode runs one kernel per ATen operation, and each reads its inputs from memory and writes its output back.
A :class:`torch.utils._python_dispatch.TorchDispatchMode` sees every one of those operations with its real tensors,
so the eager count and its bytes (inputs read + output written, per operation) are counted, not estimated.
Inductor fuses elementwise chains and reductions into few loops; ``torch._inductor.metrics.generated_kernel_count``
counts what it generated (C++ loops on a CPU, Triton kernels on a GPU). A fully fused program must still read the
inputs once and write the result once: that is the floor of its traffic.

The FX-graph cache is switched off while counting (a cache hit generates no kernels); the compile of the C++
header that Inductor keeps in ``$TMPDIR/torchinductor_$USER`` stays cached, so a warm compile takes seconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from helpers.core import timing


def gelu_bias_softmax(x, w, b):
    """A transformer-like chain: scale and shift, GELU, softmax over the last dimension."""
    return torch.softmax(torch.nn.functional.gelu(x * w + b), dim=-1)


def layernorm_residual(x, w, b):
    """x + LayerNorm(x) written out by hand: mean, variance, normalise, scale and shift, add."""
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return x + (x - mu) / torch.sqrt(var + 1e-5) * w + b


FUNCTIONS = {"gelu_bias_softmax": gelu_bias_softmax, "layernorm_residual": layernorm_residual}


class _CountOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: list[tuple[str, int]] = []     # (aten op, bytes read + written)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        nbytes = 0
        for a in list(args) + list((kwargs or {}).values()) + [out]:
            for t in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(t, torch.Tensor):
                    nbytes += t.numel() * t.element_size()
        self.ops.append((str(func.overloadpacket.__name__), nbytes))
        return out


@dataclass(frozen=True)
class FusionResult:
    function: str
    shape: str
    eager_kernels: int          # ATen operations dispatched (one kernel each)
    eager_bytes: int            # Σ per operation: tensors read + written
    compiled_kernels: int       # kernels Inductor generated
    fused_floor_bytes: int      # inputs read once + output written once
    max_abs_err: float          # compiled vs eager
    eager_time_s: float         # median
    compiled_time_s: float
    compile_time_s: float       # first call (trace + codegen + C++ compile)
    device: str


def inputs(rows: int, cols: int, device="cpu", seed: int = 0):
    g = torch.Generator(device=device).manual_seed(seed)
    return (torch.randn(rows, cols, device=device, generator=g), torch.randn(cols, device=device, generator=g),
            torch.randn(cols, device=device, generator=g))


def eager_ops(fn, *args) -> list[tuple[str, int]]:
    """The ATen operations (one kernel each) and their bytes, from one eager call."""
    with _CountOps() as c:
        fn(*args)
    return c.ops


def measure(name: str = "gelu_bias_softmax", rows: int = 512, cols: int = 1024, device=None,
            repeats: int = 10) -> FusionResult:
    """Count and time ``FUNCTIONS[name]`` eager and compiled on (rows, cols) fp32 inputs."""
    import time

    import torch._inductor.config as icfg
    from torch._inductor import metrics

    from helpers.core.device import pick_device

    if name not in FUNCTIONS:
        raise ValueError(f"function={name!r}: use one of {list(FUNCTIONS)}")
    if rows < 1 or cols < 1:
        raise ValueError(f"shape {rows}×{cols}: use positive sizes")
    dev = pick_device()[0] if device is None else torch.device(device)
    fn = FUNCTIONS[name]
    args = inputs(rows, cols, dev)
    ops = eager_ops(fn, *args)
    torch._dynamo.reset()
    old = icfg.fx_graph_cache
    icfg.fx_graph_cache = False
    try:
        metrics.reset()
        cfn = torch.compile(fn, dynamic=False)
        t0 = time.perf_counter()
        out = cfn(*args)
        timing.sync(dev)
        compile_s = time.perf_counter() - t0
        kernels = int(metrics.generated_kernel_count)
    finally:
        icfg.fx_graph_cache = old
    err = float((out - fn(*args)).abs().max())
    floor = sum(a.numel() * a.element_size() for a in args) + out.numel() * out.element_size()
    tdev = dev if dev.type == "cuda" else None
    te = timing.time_fn(lambda: fn(*args), device=tdev, warmup=2, repeats=repeats)
    tc = timing.time_fn(lambda: cfn(*args), device=tdev, warmup=2, repeats=repeats)
    return FusionResult(name, f"{rows}×{cols}", len(ops), sum(b for _, b in ops), kernels, floor, err,
                        te.median_s, tc.median_s, compile_s, str(dev))
