"""A heat-equation stencil on CPU and GPU, placed on the roofline (chapter 30, "AI for Science").

The 2-D heat equation u_t = alpha (u_xx + u_yy) on the unit square with u = 0 on the boundary, discretised by the
explicit FTCS scheme on an N x N grid (spacing h, time step dt, r = alpha dt / h^2 <= 1/4 for stability):

    u'[i,j] = u[i,j] + r (u[i+1,j] + u[i-1,j] + u[i,j+1] + u[i,j-1] - 4 u[i,j])

Each update is 7 FLOP (4 adds, 1 multiply by 4 and subtract, 1 multiply by r, 1 add) and, with perfect cache reuse,
moves 2 words (read u once, write u' once): 7/8 FLOP per byte in fp32 — far left of any GPU's ridge point, so the
stencil is memory-bound and its speed is a bandwidth measurement. The check is exact: u0 = sin(pi x) sin(pi y) is an
eigenvector of the discrete scheme, so after k steps u = lambda^k u0 with lambda = 1 - 8 r sin^2(pi h / 2).

    python -m helpers stencil --grid 1024,4096 --steps 50 --out assets/measurements/h200/stencil.json
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np

FLOP_PER_POINT = 7


def initial(n: int):
    """Interior grid of n x n points (boundary excluded), h = 1/(n+1); returns (u0, h)."""
    h = 1.0 / (n + 1)
    x = np.arange(1, n + 1) * h
    return np.outer(np.sin(math.pi * x), np.sin(math.pi * x)), h


def decay_factor(h: float, r: float) -> float:
    """lambda = 1 - 8 r sin^2(pi h / 2): the per-step factor of the lowest mode under FTCS."""
    return 1 - 8 * r * math.sin(math.pi * h / 2) ** 2


def step_naive(u: np.ndarray, r: float) -> np.ndarray:
    """Teaching version: two Python loops over the grid (zero boundary). Only for tiny grids."""
    n, m = u.shape
    out = np.empty_like(u)
    for i in range(n):
        for j in range(m):
            up = u[i - 1, j] if i > 0 else 0.0
            dn = u[i + 1, j] if i < n - 1 else 0.0
            lf = u[i, j - 1] if j > 0 else 0.0
            rt = u[i, j + 1] if j < m - 1 else 0.0
            out[i, j] = u[i, j] + r * (up + dn + lf + rt - 4 * u[i, j])
    return out


def run(u, r: float, steps: int):
    """Vectorised version (torch, CPU or GPU): a zero-padded grid, shifted slices, two buffers swapped per step."""
    import torch

    n, m = u.shape
    a = torch.zeros((n + 2, m + 2), dtype=u.dtype, device=u.device)
    b = torch.zeros_like(a)
    a[1:-1, 1:-1] = u
    for _ in range(steps):
        c = a[1:-1, 1:-1]
        b[1:-1, 1:-1] = c + r * (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] - 4 * c)
        a, b = b, a
    return a[1:-1, 1:-1]


@dataclass(frozen=True)
class StencilResult:
    grid: int
    device: str
    dtype: str
    steps: int
    time_s: float                # median, all steps
    points_per_s: float          # lattice updates per second
    gflops: float                # 7 FLOP per update
    min_bw_GBps: float           # 2 words per update: the least traffic any implementation needs
    flop_per_byte: float         # arithmetic intensity at that minimum traffic
    max_rel_error: float         # vs the exact discrete solution lambda^k u0
    sm_clock_MHz_median: float | None = None
    power_W_median: float | None = None
    throttle_reasons: tuple = ()
    sampler_note: str = ""


def peak_bytes(n: int, dtype_name: str = "float32") -> tuple[int, int]:
    """(host, device) bytes ``bench`` holds for an n x n grid: four float64 arrays on the host (initial field, exact
    solution, result, their difference) and three grids of ``dtype_name`` where it runs (field, next field, stencil
    temporaries)."""
    from helpers.formulas import dtypes

    return 4 * n * n * dtypes.bytes_per_element("fp64"), 3 * n * n * dtypes.bytes_per_element(dtype_name)


def bench(grids: list[int], steps: int = 20, device=None, dtype_name: str = "float32", r: float = 0.2,
          repeats: int = 3) -> list[StencilResult]:
    import torch

    from helpers.core import device as devmod, resources
    from helpers.frontier import sampled

    if not 0 < r <= 0.25:
        raise ValueError(f"r={r}: FTCS is stable only for 0 < r <= 0.25")
    if device is None:
        device, _ = devmod.pick_device()
    dtype = getattr(torch, dtype_name)
    word = torch.finfo(dtype).bits // 8
    on_gpu = str(device).startswith("cuda")
    for n in grids:                              # every size checked before the first one runs
        host, dev_b = peak_bytes(n, dtype_name)
        what = f"a {n} x {n} grid ({dtype_name}, with the float64 reference solution)"
        resources.require_memory(host + (0 if on_gpu else dev_b), what=what, flag="--grid")
        if on_gpu:
            resources.require_memory(dev_b, what=what, flag="--grid", device=str(device))
    out = []
    for n in grids:
        u0, h = initial(n)
        u = torch.as_tensor(u0, dtype=dtype, device=device)
        got = run(u, r, steps).double().cpu().numpy()
        exact = decay_factor(h, r) ** steps * u0
        err = float(np.abs(got - exact).max() / np.abs(exact).max())
        t, clk = sampled.time_sampled(lambda: run(u, r, steps), device, repeats=repeats)
        pts = n * n * steps / t.median_s
        out.append(StencilResult(n, str(device), dtype_name, steps, t.median_s, pts, pts * FLOP_PER_POINT / 1e9,
                                 pts * 2 * word / 1e9, FLOP_PER_POINT / (2 * word), err, **clk))
    return out


def main(argv: list[str] | None = None) -> int:
    """Heat-equation stencil benchmark: lattice updates/s, GFLOP/s and minimum memory traffic (chapter 30)."""
    from helpers.core import cli, device as devmod, results

    ap = argparse.ArgumentParser(prog="python -m helpers stencil", description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", type=cli.csv_of(cli.bounded_int(8, 32768)), default=[256, 1024])
    ap.add_argument("--steps", type=cli.bounded_int(1, 10000), default=20)
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--repeats", type=cli.bounded_int(1, 100), default=3)
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    results.add_output_args(ap)
    args = ap.parse_args(argv)
    dev, _ = devmod.pick_device(None if args.device == "auto" else args.device)
    recs = bench(args.grid, args.steps, dev, args.dtype, repeats=args.repeats)
    if args.device == "auto" and dev.type == "cuda":
        recs += bench([g for g in args.grid if g <= 2048], args.steps, devmod.pick_device("cpu")[0], args.dtype,
                      repeats=args.repeats)
    results.emit(recs, "stencil", args)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
