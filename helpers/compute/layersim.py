"""A roofline simulator of one transformer layer, checked against the same ops timed here (chapter 28).

Analytical performance simulators (Calculon, LLM-Analysis, Megatron's own estimates) all do the same thing at
heart: list the kernels of a step, count each one's FLOPs and bytes, and charge it max(FLOPs ÷ π, bytes ÷ β)
on the device's ceilings. This module does that for the forward pass of one pre-LayerNorm GPT block, then
runs the very same ops with torch on this device so the prediction can be compared with a measurement.

    ks = layersim.layer_kernels(batch=4, seq=256, hidden=512, heads=8, dtype="fp32")
    rows = layersim.compare(ks, roof, device=dev)      # predicted vs measured, per kernel

Shapes (T = batch·seq tokens, h hidden, a heads, d = h/a, F = 4h): QKV T×3h×h · scores (b·a)×s×s×d ·
softmax · context (b·a)×s×d×s · out-proj T×h×h · MLP up T×F×h · GELU · MLP down T×h×F, plus two LayerNorms
and two residual adds. FLOPs per element of the element-wise ops are conventions (stated in ``note``).
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import timing
from helpers.compute.roofline import Kernel, Roofline, elementwise_kernel, gemm_kernel

DTYPE_TORCH = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


@dataclass(frozen=True)
class OpTiming:
    name: str
    flop: float
    traffic_bytes: float
    intensity: float         # FLOP/byte
    bound: str               # what the roofline says limits it: "compute" or "memory"
    predicted_s: float       # roofline time
    measured_s: float        # fastest of the timed runs (like STREAM: interference from other work stays out)
    ratio: float             # measured ÷ predicted (1 = the model is exact; > 1 = slower than the roof)


def _bmm(name, batch, m, n, k, dtype):
    g = gemm_kernel(m, n, k, dtype)
    return Kernel(name, batch * g.flop, batch * g.traffic_bytes, dtype)


def layer_kernels(batch: int, seq: int, hidden: int, heads: int, dtype: str = "bf16", ffn_mult: int = 4) -> list[Kernel]:
    """The forward kernels of one GPT block, counted analytically (unfused: every op reads and writes memory)."""
    if hidden % heads:
        raise ValueError(f"hidden={hidden} is not divisible by heads={heads}: pick heads that divide it")
    if dtype not in DTYPE_TORCH:
        raise ValueError(f"dtype={dtype!r}: use one of {sorted(DTYPE_TORCH)}")
    T, h, a, d, F = batch * seq, hidden, heads, hidden // heads, ffn_mult * hidden
    return [
        elementwise_kernel("LayerNorm 1", T * h, 8, 2, dtype),
        gemm_kernel(T, 3 * h, h, dtype, "QKV projection"),
        _bmm("attention scores QKᵀ", batch * a, seq, seq, d, dtype),
        elementwise_kernel("softmax", batch * a * seq * seq, 5, 2, dtype),
        _bmm("attention × V", batch * a, seq, d, seq, dtype),
        gemm_kernel(T, h, h, dtype, "output projection"),
        elementwise_kernel("residual add 1", T * h, 1, 3, dtype),
        elementwise_kernel("LayerNorm 2", T * h, 8, 2, dtype),
        gemm_kernel(T, F, h, dtype, "MLP up"),
        elementwise_kernel("GELU", T * F, 14, 2, dtype),
        gemm_kernel(T, h, F, dtype, "MLP down"),
        elementwise_kernel("residual add 2", T * h, 1, 3, dtype),
    ]


def layer_ops(batch: int, seq: int, hidden: int, heads: int, dtype: str = "bf16", ffn_mult: int = 4,
              device=None, seed: int = 0) -> dict:
    """The same ops as torch callables on pre-made operands (each op timed alone, no reshapes inside)."""
    import torch
    import torch.nn.functional as Fn

    dev = torch.device(device or "cpu")
    tdt = getattr(torch, DTYPE_TORCH[dtype])
    g = torch.Generator(device=dev).manual_seed(seed)
    T, h, a, d, F = batch * seq, hidden, heads, hidden // heads, ffn_mult * hidden
    r = lambda *s: torch.randn(*s, device=dev, generator=g).to(tdt)  # noqa: E731
    x, y, w_ln = r(T, h), r(T, h), torch.ones(h, device=dev, dtype=tdt)
    w_qkv, w_o, w_up, w_dn = r(h, 3 * h), r(h, h), r(h, F), r(F, h)
    q, k, v = r(batch * a, seq, d), r(batch * a, seq, d), r(batch * a, seq, d)
    scores, probs, up = r(batch * a, seq, seq), r(batch * a, seq, seq).softmax(-1), r(T, F)
    return {
        "LayerNorm 1": lambda: Fn.layer_norm(x, (h,), w_ln),
        "QKV projection": lambda: x @ w_qkv,
        "attention scores QKᵀ": lambda: torch.bmm(q, k.transpose(1, 2)),
        "softmax": lambda: torch.softmax(scores, dim=-1),
        "attention × V": lambda: torch.bmm(probs, v),
        "output projection": lambda: x @ w_o,
        "residual add 1": lambda: x + y,
        "LayerNorm 2": lambda: Fn.layer_norm(y, (h,), w_ln),
        "MLP up": lambda: x @ w_up,
        "GELU": lambda: Fn.gelu(up, approximate="tanh"),
        "MLP down": lambda: up @ w_dn,
        "residual add 2": lambda: x + y,
    }


def compare(kernels: list[Kernel], roof: Roofline, ops: dict, device=None, repeats: int = 5,
            level: str | None = None) -> list[OpTiming]:
    """Predicted (roofline) and measured (``timing.time_fn``, fastest run) time of each kernel."""
    on_gpu = str(device or "cpu").startswith("cuda")
    out = []
    for k in kernels:
        if k.name not in ops:
            raise KeyError(f"no op named {k.name!r} to time; ops are {list(ops)}")
        t = timing.time_fn(ops[k.name], device=device if on_gpu else None, warmup=2, repeats=repeats)
        p = k.time_s(roof, level)
        out.append(OpTiming(k.name, k.flop, k.traffic_bytes, k.intensity, k.bound(roof, level), p,
                            t.min_s, t.min_s / p))
    return out


def totals(rows: list[OpTiming]) -> dict:
    """Layer totals: predicted and measured seconds, and the share of measured time in memory-bound ops."""
    pred = sum(r.predicted_s for r in rows)
    meas = sum(r.measured_s for r in rows)
    mem = sum(r.measured_s for r in rows if r.bound == "memory")
    return {"predicted_s": pred, "measured_s": meas, "ratio": meas / pred, "memory_bound_share": mem / meas,
            "flop": sum(r.flop for r in rows)}
