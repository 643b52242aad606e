"""The roofline bound, its ridge point and its time prediction (chapter 28; used in 01, 10, 15).

Williams, Waterman & Patterson, "Roofline: an insightful visual performance model for multicore architectures",
CACM 52(4), 2009, eq. (1): attainable performance = min(peak FLOP/s, intensity × peak memory bandwidth), with
intensity I = FLOPs ÷ bytes moved (FLOP/byte). The ridge point π/β is the intensity where the two meet; a kernel
left of it is memory-bound. The same bound read as a time is max(FLOPs ÷ π, bytes ÷ β).

Units: peaks in TFLOP/s (10^12 FLOP/s), bandwidths in GB/s (10^9 B/s), intensity in FLOP/byte — so
GB/s × FLOP/byte = GFLOP/s, hence the 1e-3 to TFLOP/s.

    attainable_tflops(10.0, peak_tflops=989, bw_GBps=4800)   # 48 TFLOP/s: memory-bound
    ridge_flop_per_byte(989, 4800)                          # 206 FLOP/byte
"""
from __future__ import annotations

import math


def attainable_tflops(intensity_flop_per_byte: float, peak_tflops: float, bw_GBps: float) -> float:
    """min(π, β·I) in TFLOP/s (Williams et al. 2009, eq. 1)."""
    if intensity_flop_per_byte < 0:
        raise ValueError(f"intensity={intensity_flop_per_byte!r} FLOP/byte must be ≥ 0")
    return min(peak_tflops, bw_GBps * intensity_flop_per_byte * 1e-3)


def ridge_flop_per_byte(peak_tflops: float, bw_GBps: float) -> float:
    """The intensity where the slope meets the roof: π/β in FLOP/byte (Williams et al. 2009, §2)."""
    if not bw_GBps > 0:
        raise ValueError(f"bw_GBps={bw_GBps!r} must be > 0")
    return peak_tflops * 1e3 / bw_GBps


def time_s(flop: float, traffic_bytes: float, peak_tflops: float, bw_GBps: float) -> float:
    """The roofline's time for ``flop`` FLOPs moving ``traffic_bytes``: max(FLOPs ÷ π, bytes ÷ β)."""
    return max(flop / (peak_tflops * 1e12), traffic_bytes / (bw_GBps * 1e9))


def line_points(x_range, ridge: float) -> list[float]:
    """Where a roof line is sampled for a figure: one point per decade plus the ends and the ridge. The line is
    straight on log axes on each side of the ridge, so this draws it exactly, keeps a hover value every decade,
    and is ~25× smaller in the page than 201 evenly spaced points."""
    lo, hi = math.log10(x_range[0]), math.log10(x_range[1])
    xs = {10 ** k for k in range(math.ceil(lo), math.floor(hi) + 1)} | {x_range[0], x_range[1]}
    if x_range[0] < ridge < x_range[1]:
        xs.add(ridge)
    return sorted(xs)
