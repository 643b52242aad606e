"""FP8 the Transformer-Engine way: per-tensor scaling, delayed scaling with an amax history, an fp8 GEMM (chapter 02).

An 8-bit float has few values: E4M3 (``torch.float8_e4m3fn``) reaches ±448 with 3 mantissa bits, E5M2
(``torch.float8_e5m2``) ±57,344 with 2. A tensor is therefore multiplied by a *scale* before the cast, so that its
largest magnitude (its *amax*) lands near the format's maximum, and divided by it afterwards (NVIDIA Transformer
Engine, ``DelayedScaling`` recipe: scale = fp8_max / amax / 2^margin). Two ways to choose the scale:

* **current (per-tensor) scaling**, the naive one: read this tensor's amax, then cast — a full extra pass over the
  tensor before every cast;
* **delayed scaling**, what Transformer Engine does by default: cast with the scale computed from the amax *history*
  of earlier steps (max over the last ``history_len`` amaxes), record this tensor's amax on the way, update the scale
  for the next step. No extra pass; a sudden jump in amax saturates once, until the history catches up.

The two agree exactly on a tensor whose amax does not change (tests/compute/test_fp8.py). The GEMM multiplies fp8 operands
with ``torch._scaled_mm`` (fp32 accumulation, bf16 out) — on a CPU too, where torch emulates it; timed against a
bf16 matmul only where it means something, on a GPU with FP8 Tensor Cores (SM ≥ 8.9), under the NVML sampler.

    python -m helpers fp8 error --json               # rounding error of bf16 / e4m3 / e5m2, scaled and not
    python -m helpers fp8 gemm --n 8192 --out FILE   # fp8 _scaled_mm vs bf16 GEMM: error and (GPU) time
"""
from __future__ import annotations

import argparse
import sys
from collections import deque
from dataclasses import dataclass

import torch

from helpers.core import results, timing
from helpers.formulas import flops

FORMATS = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "bf16": torch.bfloat16, "fp16": torch.float16}
TE_SOURCE = "https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html"


def _dtype(fmt: str) -> torch.dtype:
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: use one of {sorted(FORMATS)}")
    return FORMATS[fmt]


@dataclass(frozen=True)
class FormatInfo:
    format: str
    bits: int
    mantissa_bits: int
    max_value: float
    min_normal: float
    min_subnormal: float
    eps: float                     # spacing just above 1.0: the relative rounding step is at most eps / 2


def format_info(fmt: str) -> FormatInfo:
    """What torch says about a format (``torch.finfo``), with the smallest subnormal derived from it."""
    f = torch.finfo(_dtype(fmt))
    mant = round(-torch.log2(torch.tensor(f.eps)).item())
    return FormatInfo(fmt, f.bits, mant, float(f.max), float(f.smallest_normal), float(f.smallest_normal) * f.eps,
                      float(f.eps))


def scale_for(amax: float, fmt: str, margin: int = 0) -> float:
    """Transformer Engine's scale: fp8_max / amax / 2**margin, so that amax lands just under the format's maximum.
    An amax of zero (an all-zero tensor) or a non-finite one keeps the scale at 1."""
    amax = float(amax)
    if margin < 0:
        raise ValueError(f"margin={margin}: use 0 or a positive number of powers of two of headroom")
    if not (amax > 0 and amax < float("inf")):
        return 1.0
    return format_info(fmt).max_value / amax / 2.0**margin


@dataclass(frozen=True)
class Quantized:
    data: torch.Tensor             # the fp8 (or 16-bit) tensor, x * scale
    scale: float                   # dequantise with data / scale
    amax: float                    # max |x| of the tensor that was cast
    saturated: int                 # elements whose |x * scale| lay beyond rounding distance of the format's maximum

    def dequantize(self) -> torch.Tensor:
        return self.data.to(torch.float32) / self.scale


def cast(x: torch.Tensor, fmt: str, scale: float = 1.0) -> Quantized:
    """x · scale, clamped to ±max (saturation, as Transformer Engine casts) and rounded to ``fmt``."""
    if not scale > 0:
        raise ValueError(f"scale={scale!r} must be > 0")
    f = format_info(fmt)
    lim = f.max_value
    y = x.to(torch.float32) * scale
    sat = int((y.abs() > lim * (1 + f.eps / 2)).sum())   # beyond rounding distance of the maximum: really clipped
    return Quantized(y.clamp(-lim, lim).to(_dtype(fmt)), float(scale), float(x.abs().max()), sat)


def quantize_per_tensor(x: torch.Tensor, fmt: str = "e4m3", margin: int = 0) -> Quantized:
    """Current scaling, the naive way: read this tensor's amax first, then cast with the scale it gives."""
    return cast(x, fmt, scale_for(x.abs().max(), fmt, margin))


class DelayedScaling:
    """Transformer Engine's delayed scaling for one tensor: cast with the scale from the amax history, then record
    this tensor's amax and update the scale for the next call. ``algo`` "max" uses the largest amax in the
    history (TE's default), "most_recent" the last one."""

    def __init__(self, fmt: str = "e4m3", history_len: int = 16, algo: str = "max", margin: int = 0):
        if history_len < 1:
            raise ValueError(f"history_len={history_len}: keep at least one amax (TE's default is 1024)")
        if algo not in ("max", "most_recent"):
            raise ValueError(f"algo={algo!r}: use 'max' or 'most_recent' (TE's amax_compute_algo)")
        _dtype(fmt)
        self.fmt, self.algo, self.margin = fmt, algo, margin
        self.history: deque[float] = deque(maxlen=history_len)
        self.scale = 1.0                                   # TE starts every scale at 1

    def quantize(self, x: torch.Tensor) -> Quantized:
        q = cast(x, self.fmt, self.scale)                  # the cast uses what earlier steps saw …
        self.history.append(q.amax)                        # … and this step's amax comes for free
        amax = max(self.history) if self.algo == "max" else self.history[-1]
        self.scale = scale_for(amax, self.fmt, self.margin)
        return q


def rel_error(approx: torch.Tensor, ref: torch.Tensor) -> float:
    """‖approx − ref‖ / ‖ref‖ in fp32."""
    ref = ref.to(torch.float32)
    return float((approx.to(torch.float32) - ref).norm() / ref.norm())


@dataclass(frozen=True)
class RoundingError:
    format: str
    scaling: str                   # "none" (cast as is) or "per-tensor" (amax → scale)
    scale: float
    rel_rms_error: float           # ‖dequant(cast(x)) − x‖ / ‖x‖
    underflow_fraction: float      # non-zero elements that became 0
    saturated_fraction: float      # elements clamped at the format's maximum


def rounding_errors(x: torch.Tensor, formats=("bf16", "e4m3", "e5m2"), margin: int = 0) -> list[RoundingError]:
    """The error each format makes on ``x``, cast unscaled and (8-bit formats) with per-tensor scaling."""
    nz = int((x != 0).sum()) or 1
    out = []
    for fmt in formats:
        for scaling in ("none", "per-tensor") if fmt in ("e4m3", "e5m2") else ("none",):
            q = cast(x, fmt) if scaling == "none" else quantize_per_tensor(x, fmt, margin)
            d = q.dequantize()
            under = int(((d == 0) & (x != 0)).sum())
            out.append(RoundingError(fmt, scaling, q.scale, rel_error(d, x), under / nz, q.saturated / x.numel()))
    return out


@dataclass(frozen=True)
class ScalingStep:
    step: int
    amax: float                    # of this step's tensor
    scale_current: float           # per-tensor (naive): from this tensor
    scale_delayed: float           # delayed: from the history before this step
    rel_error_current: float
    rel_error_delayed: float
    saturated_delayed: int         # elements clamped because the delayed scale was too large


def compare_scaling(tensors, fmt: str = "e4m3", history_len: int = 16, algo: str = "max",
                    margin: int = 0) -> list[ScalingStep]:
    """Per-tensor (current) against delayed scaling over a sequence of tensors, one record per step."""
    ds = DelayedScaling(fmt, history_len, algo, margin)
    out = []
    for i, x in enumerate(tensors):
        cur = quantize_per_tensor(x, fmt, margin)
        dl = ds.quantize(x)
        out.append(ScalingStep(i, cur.amax, cur.scale, dl.scale, rel_error(cur.dequantize(), x),
                               rel_error(dl.dequantize(), x), dl.saturated))
    return out


# ---------------------------------------------------------------- the fp8 GEMM (torch._scaled_mm)

def fp8_matmul(a: torch.Tensor, b: torch.Tensor, fmt: str = "e4m3", out_dtype=torch.bfloat16) -> torch.Tensor:
    """a (m, k) @ b (k, n) in fp8: per-tensor scales, operands cast, ``torch._scaled_mm`` with the inverse scales
    (it multiplies them back in after the fp32-accumulated product). b is passed column-major, as cuBLASLt wants."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"shapes {tuple(a.shape)} @ {tuple(b.shape)}: need (m, k) @ (k, n)")
    qa, qb = quantize_per_tensor(a, fmt), quantize_per_tensor(b.t().contiguous(), fmt)
    inv = lambda q: torch.tensor(1.0 / q.scale, dtype=torch.float32, device=a.device)  # noqa: E731
    return torch._scaled_mm(qa.data, qb.data.t(), scale_a=inv(qa), scale_b=inv(qb), out_dtype=out_dtype)


@dataclass(frozen=True)
class GemmCompare:
    n: int                         # n × n × n
    dtype: str                     # "fp8-e4m3" (torch._scaled_mm) or "bf16" (matmul)
    rel_error_vs_fp32: float       # against an fp32 matmul of the same inputs
    time_s: float | None           # median of the timed calls (None: not timed)
    tflops: float | None           # 2n³ / time_s
    device: str
    timing_note: str
    sm_clock_MHz_median: float | None = None
    power_W_median: float | None = None
    throttle_reasons: tuple = ()


def unsupported(dev: torch.device) -> str | None:
    """Why ``torch._scaled_mm`` cannot run fp8 on ``dev`` (None when it can)."""
    if not hasattr(torch, "_scaled_mm"):
        return f"torch {torch.__version__} has no torch._scaled_mm"
    if dev.type == "cuda" and torch.cuda.get_device_capability(dev) < (8, 9):
        cc = torch.cuda.get_device_capability(dev)
        return f"fp8 Tensor Cores need compute capability ≥ 8.9 (Ada/Hopper); this GPU is {cc[0]}.{cc[1]}"
    return None


def gemm_compare(n: int = 128, device=None, repeats: int = 10, time_cpu: bool = False) -> list[GemmCompare]:
    """fp8 (``_scaled_mm``) and bf16 n³ GEMMs on randn inputs: the error of each against fp32 and, on a GPU (or with
    ``time_cpu``), the median time through ``timing.time_fn`` with SM clock and power sampled by NVML."""
    from helpers.core import gpusampler
    from helpers.core.device import pick_device

    dev = pick_device()[0] if device is None else torch.device(device)
    if n < 16 or n % 16:
        raise ValueError(f"n={n}: use a multiple of 16 (fp8 Tensor Cores require it), e.g. 128 on a CPU, 8192 on a GPU")
    why = unsupported(dev)
    if why:
        raise ValueError(why)
    g = torch.Generator(device=dev).manual_seed(0)
    a, b = torch.randn(n, n, device=dev, generator=g), torch.randn(n, n, device=dev, generator=g)
    ref = a @ b
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    ab, bb = a.to(torch.bfloat16), b.to(torch.bfloat16)
    qa, qb = quantize_per_tensor(a), quantize_per_tensor(b.t().contiguous())
    sa, sb = (torch.tensor(1.0 / q.scale, device=dev) for q in (qa, qb))
    bt = qb.data.t()
    calls = {"fp8-e4m3": lambda: torch._scaled_mm(qa.data, bt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16),
             "bf16": lambda: ab @ bb}
    out = []
    for dtype, fn in calls.items():
        err = rel_error(fn(), ref)
        t = smp = None
        note = "not timed: a CPU has no FP8 units (torch emulates _scaled_mm there); time_cpu=True times it anyway"
        if dev.type == "cuda":
            with gpusampler.Sampler.for_torch_device(dev) as s:
                t = timing.time_fn(fn, device=dev, warmup=5, repeats=repeats)
            smp, note = s.summary(), "cuda events, median; fp8 operands pre-cast (the cast is not timed)"
        elif time_cpu:
            t, note = timing.time_fn(fn, warmup=1, repeats=repeats), "perf_counter on the CPU: emulated fp8"
        med = t.median_s if t else None
        out.append(GemmCompare(n, dtype, err, med, flops.gemm_flops(n, n, n) / med / 1e12 if med else None, name, note,
                               smp["sm_clock_MHz_median"] if smp else None, smp["power_W_median"] if smp else None,
                               tuple(smp["throttle_reasons"]) if smp else ()))
    return out


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli

    ap = argparse.ArgumentParser(prog="python -m helpers fp8", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    e = sub.add_parser("error", help="rounding error of bf16 / e4m3 / e5m2 on randn × --std, scaled and unscaled")
    e.add_argument("--numel", type=cli.positive_int, default=2**16)
    e.add_argument("--std", type=cli.bounded_float(1e-12, 1e12), default=1.0)
    gm = sub.add_parser("gemm", help="fp8 torch._scaled_mm vs bf16 GEMM: error vs fp32 and (GPU) time")
    gm.add_argument("--n", type=cli.csv_of(cli.positive_int), default=None,
                    help="sizes, comma-separated (default 4096,8192 on a GPU, 128 on a CPU, where emulated fp8 is slow)")
    gm.add_argument("--repeats", type=cli.bounded_int(1, 10_000), default=20)
    for p in (e, gm):
        results.add_output_args(p)
    a = ap.parse_args(argv)
    if a.what == "error":
        x = torch.randn(a.numel, generator=torch.Generator().manual_seed(0)) * a.std
        results.emit(rounding_errors(x), "fp8_error", a)
        return 0
    from helpers.core.device import pick_device

    dev = pick_device()[0]
    sizes = a.n or ([4096, 8192] if dev.type == "cuda" else [128])
    recs = [r for n in sizes for r in gemm_compare(n, dev, a.repeats)]
    results.emit(recs, "fp8_gemm", a)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
