"""An HPL-style dense solve in fp64, its operation count and HPL's residual check (chapter 15).

    python -m helpers bench hpl --json           # the CLI lives in helpers.compute.bench
    hplbench.hpl(n=2048)                          # one record: time, TFLOP/s, scaled residual, % of the fp64 peak

Not HPL itself (no block-cyclic distribution, no look-ahead): the same operation, count and pass rule, on one
device through ``torch.linalg.solve``. The peak is the datasheet's fp64 Tensor Core figure on a GPU
(``helpers.compute.peaks``); a CPU has none, and ``peak_note`` says so. Units: 1 TFLOP/s = 10^12 FLOP/s.
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import timing
from helpers.compute import peaks


@dataclass(frozen=True)
class HplResult:
    kind: str            # "hpl"
    dtype: str
    n: int
    flop: float          # 2/3·n³ + 3/2·n² (HPL's count, testing/ptest/HPL_pdtest.c)
    time_s: float        # fastest solve
    tflops: float
    scaled_residual: float   # ‖Ax−b‖∞ / (ε·(‖A‖∞‖x‖∞ + ‖b‖∞)·n); HPL passes below 16
    passed: bool
    peak_tflops: float | None
    pct_of_peak: float | None
    peak_note: str
    device: str


def hpl_flop(n: int) -> float:
    """HPL's operation count for an n×n solve: LU (2/3·n³ − 1/2·n²) plus the triangular solves (2·n²)."""
    return 2.0 / 3.0 * n**3 + 1.5 * n**2


def hpl(n: int | None = None, repeats: int = 3, device=None, seed: int = 0) -> list[HplResult]:
    """An HPL-style run: solve A x = b (LU with partial pivoting, fp64) and check the scaled residual.

    Not HPL itself (no block-cyclic distribution, no look-ahead): the same operation, count and check, on
    one device through ``torch.linalg.solve`` (LAPACK on a CPU, cuSOLVER on a GPU)."""
    import torch

    from helpers.core.device import pick_device

    dev = pick_device()[0] if device is None else torch.device(device)
    on_gpu = dev.type == "cuda"
    n = n or (16384 if on_gpu else 2048)
    if n < 16:
        raise ValueError(f"n={n}: use n ≥ 16 (HPL runs use thousands)")
    g = torch.Generator(device=dev).manual_seed(seed)
    A = torch.rand(n, n, dtype=torch.float64, device=dev, generator=g) - 0.5   # HPL's matgen: uniform(-½, ½)
    b = torch.rand(n, 1, dtype=torch.float64, device=dev, generator=g) - 0.5
    box = {}
    t = timing.time_fn(lambda: box.__setitem__("x", torch.linalg.solve(A, b)), device=dev if on_gpu else None,
                       warmup=1, repeats=repeats)
    x = box["x"]
    inf = lambda v: torch.linalg.matrix_norm(v, ord=float("inf")).item()  # noqa: E731
    eps = torch.finfo(torch.float64).eps
    resid = inf(A @ x - b) / (eps * (inf(A) * inf(x) + inf(b)) * n)
    name = peaks.device_name(dev)
    pk, note = peaks.peak(name, "fp64_tc" if on_gpu else "fp64")
    tf = hpl_flop(n) / t.min_s / 1e12
    return [HplResult("hpl", "fp64", n, hpl_flop(n), t.min_s, tf, resid, resid < 16.0, pk,
                      None if pk is None else 100 * tf / pk, note, name)]
