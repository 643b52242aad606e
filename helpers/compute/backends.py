"""The same work on different engines: numpy, torch on CPU, torch on GPU, cupy (chapter 01, "CPU vs GPU").

Two kinds of work, because they stress different limits:

* ``matmul`` — n×n×n matrix product, 2n³ FLOPs: compute-bound, where GPUs' Tensor Cores shine;
* ``elementwise`` — ``y = a*x + b`` over n elements: memory-bound, where the gain is the ratio of memory
  bandwidths, not of FLOP rates. ``bw_GBps`` counts the compulsory 2 × 4 bytes per element (read x, write y);
  every engine here makes two passes (multiply, then add in place), so the memory actually moves twice that.

    python -m helpers backends --json

Engines that are not present (no GPU, no cupy) are skipped with the reason in ``skipped``.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, results, timing


@dataclass(frozen=True)
class EngineResult:
    engine: str             # "numpy", "torch-cpu", "torch-cuda", "cupy"
    work: str               # "matmul" or "elementwise"
    n: int                  # matrix side, or number of elements
    dtype: str
    time_s: float           # median
    gflops: float           # 10^9 FLOP/s
    bw_GBps: float          # 10^9 B/s of compulsory traffic (inputs read once, output written once)


def _work_counts(work: str, n: int, itemsize: int) -> tuple[float, float]:
    """(FLOPs, bytes) for one call."""
    if work == "matmul":
        return 2.0 * n**3, 3.0 * n * n * itemsize
    if work == "elementwise":
        return 2.0 * n, 2.0 * n * itemsize      # y = a*x + b: read x, write y; a, b scalars
    raise ValueError(f"work={work!r}: use 'matmul' or 'elementwise'")


def engines() -> tuple[list[str], dict[str, str]]:
    """(available engines, {missing engine: reason})."""
    import torch

    have, skipped = ["numpy", "torch-cpu"], {}
    if torch.cuda.is_available():
        have.append("torch-cuda")
    else:
        skipped["torch-cuda"] = "no CUDA GPU visible to torch"
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        have.append("cupy")
    except Exception as e:  # ImportError on CPU machines; CUDARuntimeError without a driver
        skipped["cupy"] = f"cupy unavailable ({type(e).__name__})"
    return have, skipped


def _make(engine: str, work: str, n: int, seed: int = 0):
    """Return a zero-argument callable doing the work on ``engine``, and the device for timing."""
    import numpy as np
    import torch

    if engine in ("numpy", "cupy"):
        xp = np if engine == "numpy" else __import__("cupy")
        rng = xp.random.default_rng(seed)
        if work == "matmul":
            a, b = rng.standard_normal((n, n), dtype=xp.float32), rng.standard_normal((n, n), dtype=xp.float32)
            fn = lambda: xp.matmul(a, b)  # noqa: E731
        else:
            x, y = rng.standard_normal(n, dtype=xp.float32), xp.empty(n, dtype=xp.float32)
            fn = lambda: xp.add(xp.multiply(x, 2.0, out=y), 1.0, out=y)  # noqa: E731
        if engine == "cupy":
            def run():
                fn()
                xp.cuda.get_current_stream().synchronize()
            return run, None
        return fn, None
    dev = torch.device("cuda" if engine == "torch-cuda" else "cpu")
    g = torch.Generator(device="cpu").manual_seed(seed)
    if work == "matmul":
        a = torch.randn(n, n, generator=g).to(dev)
        b = torch.randn(n, n, generator=g).to(dev)
        return (lambda: a @ b), dev
    x = torch.randn(n, generator=g).to(dev)
    y = torch.empty_like(x)
    return (lambda: torch.mul(x, 2.0, out=y).add_(1.0)), dev


def compare(work: str = "matmul", n: int = 1024, repeats: int = 5,
            engine_list: list[str] | None = None) -> list[EngineResult]:
    """Time ``work`` of size ``n`` on every available engine (or those in ``engine_list``)."""
    have, _ = engines()
    out = []
    for eng in engine_list or have:
        if eng not in have:
            continue
        fn, dev = _make(eng, work, n)
        t = timing.time_fn(fn, device=dev, warmup=2, repeats=repeats)
        flops, nbytes = _work_counts(work, n, 4)
        out.append(EngineResult(eng, work, n, "float32", t.median_s, flops / t.median_s / 1e9,
                                nbytes / t.median_s / 1e9))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers backends", description=__doc__.split("\n")[0])
    ap.add_argument("--matmul-n", type=cli.bounded_int(1, 65536), default=2048)
    ap.add_argument("--elementwise-n", type=cli.bounded_int(1, 2**34), default=2**24)
    ap.add_argument("--repeats", type=cli.repeats, default=5)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = compare("matmul", a.matmul_n, a.repeats) + compare("elementwise", a.elementwise_n, a.repeats)
    results.emit(recs, "backends", a, skipped=engines()[1])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
