"""FP8, FP6 and FP4 number formats and block scaling (MX, NVFP4): what Blackwell's new precisions cost in error
(chapter 30).

A minifloat with e exponent bits and m mantissa bits (bias 2^(e-1) - 1, no infinities, as the OCP Microscaling
formats define FP6/FP4) has few values: FP4 E2M1 holds only +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}. To use it for tensors the
values are scaled first. Per-tensor scaling maps the tensor's absolute maximum to the format's maximum. Block scaling
gives every block of k consecutive values its own scale: the OCP MX formats use k = 32 and a power-of-two scale
(E8M0), NVIDIA's NVFP4 uses k = 16 and an FP8 E4M3 scale. ``quantize`` rounds to the nearest representable value and
returns the dequantised tensor, so the error of each scheme can be measured on the same data.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

FORMATS = {"fp8_e4m3": (4, 3), "fp6_e3m2": (3, 2), "fp6_e2m3": (2, 3), "fp4_e2m1": (2, 1)}


@lru_cache(maxsize=None)
def grid(fmt: str) -> np.ndarray:
    """All non-negative values of the format, ascending (subnormals included)."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: known formats are {list(FORMATS)}")
    e, m = FORMATS[fmt]
    bias = 2 ** (e - 1) - 1
    vals = {0.0}
    for E in range(2 ** e):
        for M in range(2 ** m):
            v = (M / 2 ** m) * 2.0 ** (1 - bias) if E == 0 else (1 + M / 2 ** m) * 2.0 ** (E - bias)
            vals.add(v)
    g = np.array(sorted(vals))
    if fmt == "fp8_e4m3":           # OCP FP8 E4M3: the all-ones pattern is NaN, so the maximum is 448
        g = g[g <= 448]
    return g


def round_to(x: np.ndarray, fmt: str) -> np.ndarray:
    """Round to the nearest representable value (saturating at the format's maximum)."""
    g = grid(fmt)
    a = np.clip(np.abs(x), 0, g[-1])
    i = np.clip(np.searchsorted(g, a), 1, len(g) - 1)
    lo, hi = g[i - 1], g[i]
    return np.sign(x) * np.where(a - lo <= hi - a, lo, hi)


def quantize(x: np.ndarray, fmt: str, block: int | None = None, scale: str = "float") -> np.ndarray:
    """Scale (per tensor, or per block of ``block`` values), round to ``fmt``, scale back.

    ``scale``: "float" (exact amax / max), "pow2" (MX's E8M0: the power of two at or above amax / max, so amax never
    overflows) or "e4m3" (NVFP4: the scale itself rounded to FP8 E4M3)."""
    gmax = grid(fmt)[-1]
    flat = x.reshape(-1) if block is None else x.reshape(-1, block)
    amax = np.abs(flat).max(axis=-1, keepdims=True)
    s = np.where(amax > 0, amax / gmax, 1.0)
    if scale == "pow2":
        s = 2.0 ** np.ceil(np.log2(s))
    elif scale == "e4m3":
        s = np.maximum(round_to(s, "fp8_e4m3"), grid("fp8_e4m3")[1])
    elif scale != "float":
        raise ValueError(f"scale {scale!r}: use 'float', 'pow2' or 'e4m3'")
    return (round_to(flat / s, fmt) * s).reshape(x.shape)


@dataclass(frozen=True)
class QuantError:
    scheme: str
    bits_per_value: float        # element bits + scale bits spread over the block
    rel_rms_error: float         # ||q - x|| / ||x||


SCHEMES = [("FP8 E4M3, per tensor", "fp8_e4m3", None, "float", 8.0),
           ("FP6 E3M2, MX block 32", "fp6_e3m2", 32, "pow2", 6 + 8 / 32),
           ("FP4 E2M1, per tensor", "fp4_e2m1", None, "float", 4.0),
           ("MXFP4 (E2M1, block 32, E8M0 scale)", "fp4_e2m1", 32, "pow2", 4 + 8 / 32),
           ("NVFP4 (E2M1, block 16, E4M3 scale)", "fp4_e2m1", 16, "e4m3", 4 + 8 / 16)]


def compare(x: np.ndarray) -> list[QuantError]:
    """Relative RMS error of each scheme on ``x`` (size a multiple of 32)."""
    if x.size % 32:
        raise ValueError(f"{x.size} values: use a multiple of 32 so every block is full")
    norm = np.linalg.norm(x)
    return [QuantError(name, bits, float(np.linalg.norm(quantize(x, f, b, s) - x) / norm))
            for name, f, b, s, bits in SCHEMES]


def heavy_tailed(n: int = 1 << 16, seed: int = 0) -> np.ndarray:
    """Weights-like data: Student-t with 4 degrees of freedom (a few large outliers, as in LLM activations)."""
    return np.random.default_rng(seed).standard_t(4, size=n)
