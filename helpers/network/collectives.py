"""Collective benchmarks the nccl-tests way: time, algbw, busbw and a data check per op and size (chapter 03).

Five collectives — all_reduce, all_gather, reduce_scatter, broadcast, all_to_all — over a size sweep. For each
op and size every rank fills its buffers with rank-dependent values, then the op runs ``warmup`` untimed and
``iters`` timed times; before each call the inputs are refilled and the ranks meet at a barrier (untimed), and on
a GPU each call is bracketed by CUDA events (``helpers.core.timing``). The output of the last timed call is checked
against the expected result, like ``nccl-tests -c 1``. Times are rank-averaged medians.

Bandwidths as nccl-tests defines them (doc/PERFORMANCE.md; src/*.cu ``*GetBw``), 1 GB/s = 10^9 B/s:

    algbw = S / t          busbw = algbw × factor(op, n)      (helpers.formulas.comm.busbw_factor)

    op              S (size_bytes)           factor
    all_reduce      the buffer               2(n-1)/n
    all_gather      n × per-rank input       (n-1)/n
    reduce_scatter  n × per-rank output      (n-1)/n
    all_to_all      per-rank send buffer     (n-1)/n
    broadcast       the buffer               1

Launch it any of three ways (the same worker runs in each):

    python -m helpers collectives --world-size 2 --op all --json        # spawns 2 ranks (gloo on CPU)
    torchrun --nproc_per_node=8 -m helpers collectives --op all_reduce --max-bytes 1G
    srun -N 2 --ntasks-per-node=8 python -m helpers collectives --op all   # export MASTER_ADDR/PORT first
"""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

from helpers.core.units import parse_size  # noqa: F401  (re-exported for callers)

from helpers.core import cli
from helpers.formulas import comm

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all")
DTYPES = ("float32", "bfloat16", "float16")
BENCHMARK_VERSION = 1





def size_sweep(min_bytes: int | str, max_bytes: int | str, factor: int = 4) -> list[int]:
    """Sizes min, min·f, min·f², … ≤ max (like nccl-tests -b -e -f)."""
    lo, hi = parse_size(min_bytes), parse_size(max_bytes)
    if lo < 1 or hi < lo or factor < 2:
        raise ValueError(f"size sweep {lo}..{hi} ×{factor}: need 1 ≤ min ≤ max and factor ≥ 2")
    out = [lo]
    while out[-1] * factor <= hi:
        out.append(out[-1] * factor)
    return out


@dataclass(frozen=True)
class CollectiveResult:
    op: str
    world_size: int
    backend: str
    device: str             # "cpu" or "cuda"
    dtype: str
    size_bytes: int         # S, as nccl-tests' "size" column
    count_elems: int        # elements in S
    time_s: float           # median over iterations, averaged over ranks
    time_min_s: float       # fastest iteration, averaged over ranks
    algbw_GBps: float
    busbw_GBps: float
    correct: bool           # every rank's output equals the expected values
    warmup: int
    iters: int


# ------------------------------------------------------------------ one op on one rank

def _values(op: str, rank: int, n: int, c: int, i, ic):
    """(input, expected output) of one rank as int64 tensors, for element indices ``i`` of the full buffer and
    ``ic`` of one chunk. Index arithmetic stays in int64: float32 is exact only up to 2^24 (64 MiB of floats)."""
    tri = n * (n + 1) // 2
    if op == "all_reduce":
        return (rank + 1) + i % 7, tri + n * (i % 7)
    if op == "broadcast":
        return (1 + i % 7) if rank == 0 else (i * 0 - 1), 1 + i % 7
    if op == "all_gather":
        return (rank + 1) + ic % 7, (i // c + 1) + (i % c) % 7
    if op == "reduce_scatter":
        return (rank + 1) + i % 7, tri + n * ((rank * c + ic) % 7)
    if op == "all_to_all":   # chunk d of rank s goes to rank d; it lands as chunk s there
        return 1 + rank + n * (i // c) + n * n * ((i % c) % 3), 1 + (i // c) + n * rank + n * n * ((i % c) % 3)
    raise ValueError(f"op={op!r}: choose one of {OPS}")


class _Case:
    """Buffers, the call, the refill and the expected result of one op at one size on one rank.

    Values are small integers, exact in every dtype used here: v = (rank+1) + (i mod 7) for reductions, so the sum
    over n ranks is n(n+1)/2 + n·(i mod 7); all_to_all sends v = 1 + src + n·dst + n²·(i mod 3) so a chunk that
    lands at the wrong rank or place is caught."""

    def __init__(self, op: str, count: int, rank: int, n: int, device, dtype):
        import torch
        import torch.distributed as dist

        self.op, self.n = op, n
        c = count // n                                   # per-rank chunk (count is a multiple of n)
        i = torch.arange(count, device=device, dtype=torch.int64)
        ic = torch.arange(c, device=device, dtype=torch.int64)
        src, exp = _values(op, rank, n, c, i, ic)
        new = lambda k: torch.empty(k, device=device, dtype=dtype)  # noqa: E731
        if op in ("all_reduce", "broadcast"):
            self.inp = self.out = new(count)
            self.call = (lambda: dist.all_reduce(self.inp)) if op == "all_reduce" else \
                (lambda: dist.broadcast(self.inp, src=0))
        elif op == "all_gather":
            self.inp, self.out = new(c), new(count)
            gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
            self.call = lambda: gather(self.out, self.inp)
        elif op == "reduce_scatter":
            self.inp, self.out = new(count), new(c)
            scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
            self.call = lambda: scatter(self.out, self.inp)
        else:
            self.inp, self.out = new(count), new(count)
            self.call = lambda: dist.all_to_all_single(self.out, self.inp)
        self.pristine = src.to(dtype)
        self.expected = exp.to(dtype)
        del i, ic, src, exp

    def refill(self) -> None:
        self.inp.copy_(self.pristine)
        if self.out is not self.inp:
            self.out.fill_(-2)

    def correct(self) -> bool:
        import torch

        if self.out.dtype == torch.float32:
            return bool(torch.equal(self.out, self.expected))
        rtol = {torch.bfloat16: 2**-7, torch.float16: 2**-10}[self.out.dtype]  # rounding of the sums
        return bool(torch.allclose(self.out.float(), self.expected.float(), rtol=rtol, atol=0))


def sweep_worker(ctx, ops, sizes, dtype: str = "float32", warmup: int = 5, iters: int = 20) -> list[dict]:
    """One rank's part of the sweep (for ``launch.run``: spawned or torchrun/srun ranks). Rank 0 returns the records."""
    import torch
    import torch.distributed as dist

    from helpers.core import results, timing

    torch.manual_seed(0)
    n, device = ctx.world_size, torch.device(ctx.device)
    dt = getattr(torch, dtype)
    elem = torch.tensor([], dtype=dt).element_size()
    on_gpu = device.type == "cuda"
    out = []
    for op in ops:
        for size in sizes:
            count = max(1, size // elem // n) * n                 # S rounded to whole per-rank chunks
            case = _Case(op, count, ctx.rank, n, device, dt)

            def setup():
                case.refill()
                timing.sync(device)
                dist.barrier()                                   # every rank starts the op together

            t = timing.time_fn(case.call, device=device if on_gpu else None, warmup=warmup,
                               repeats=iters, setup=setup)
            timing.sync(device)
            agg = torch.tensor([t.median_s, t.min_s, float(case.correct())], dtype=torch.float64, device=device)
            dist.all_reduce(agg)                                  # rank-averaged times; sum of "correct" flags
            med, tmin, ok = (agg / n).tolist()[:2] + [agg[2].item() == n]
            algbw = count * elem / med / 1e9
            out.append(CollectiveResult(op, n, ctx.backend, device.type, dtype, count * elem, count, med, tmin,
                                        algbw, algbw * comm.busbw_factor(op, n), ok, warmup, iters))
            del case
    return [results.to_dict(r) for r in out] if ctx.rank == 0 else []


def run(ops=("all_reduce",), sizes=(2**10, 2**20), world_size: int = 2, backend: str | None = None,
        dtype: str = "float32", warmup: int = 5, iters: int = 20, timeout_s: float = 300.0):
    """``world_size`` ranks (``launch.run``: spawned, or torchrun's) sweep. Returns (records as dicts, the backend
    and why it was chosen)."""
    from helpers.core import launch

    ops, sizes = _check(ops, sizes, dtype, warmup, iters)
    res = launch.run(sweep_worker, world_size, ops, sizes, dtype, warmup, iters, backend=backend,
                     timeout_s=timeout_s)
    return list(res.results[0]), res.backend_reason


def _check(ops, sizes, dtype, warmup, iters):
    ops = list(OPS) if ops in ("all", ["all"], ("all",)) else list(ops)
    bad = [o for o in ops if o not in OPS]
    if bad:
        raise ValueError(f"op(s) {bad}: choose from {OPS} or 'all'")
    if dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r}: choose one of {DTYPES}")
    if iters < 1 or warmup < 0:
        raise ValueError(f"iters={iters} must be ≥ 1 and warmup={warmup} ≥ 0")
    return ops, [parse_size(s) for s in sizes]


def average_busbw(records, op: str) -> float:
    """Mean busbw over the sweep for one op — nccl-tests' "Avg bus bandwidth" line."""
    vals = [r["busbw_GBps"] for r in records if r["op"] == op]
    if not vals:
        raise ValueError(f"no records for op={op!r}; ops present: {sorted({r['op'] for r in records})}")
    return statistics.fmean(vals)


COLUMNS = ["op", "world_size", "backend", "size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "correct"]


def main(argv=None) -> int:
    from helpers.core import launch, results

    ap = argparse.ArgumentParser(prog="python -m helpers collectives", description=__doc__.split("\n")[0])
    ap.add_argument("--op", nargs="+", default=["all_reduce"], help=f"one or more of {OPS}, or 'all'")
    launch.add_args(ap, 2, many=True, timeout_s=300.0)          # --world-size 2 4: one sweep each
    ap.add_argument("--min-bytes", type=cli.size_bytes(1, 2**36), default="1K")
    ap.add_argument("--max-bytes", type=cli.size_bytes(1, 2**36), default="4M")
    ap.add_argument("--factor", type=cli.bounded_int(2, 1024), default=4, help="size multiplier between steps")
    ap.add_argument("--dtype", default="float32", choices=DTYPES)
    ap.add_argument("--warmup", type=cli.bounded_int(0, 100_000), default=5)
    ap.add_argument("--iters", type=cli.repeats, default=20)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    try:
        ops, sizes = _check(a.op, size_sweep(a.min_bytes, a.max_bytes, a.factor), a.dtype, a.warmup, a.iters)
    except ValueError as e:
        ap.error(str(e))
    meta = dict(benchmark_version=BENCHMARK_VERSION, units="1 GB/s = 1e9 B/s; size_bytes is nccl-tests' S",
                busbw="busbw = algbw * factor; all_reduce 2(n-1)/n, all_gather/reduce_scatter/all_to_all (n-1)/n, "
                      "broadcast 1 (nccl-tests doc/PERFORMANCE.md)")
    recs, reasons = [], []
    for ws in launch.world_sizes(a.world_size):        # under torchrun/srun: the launcher's size, once
        r, why = run(ops, sizes, ws, a.backend, a.dtype, a.warmup, a.iters, a.timeout)
        recs += r
        reasons.append(why)
    launch.emit(recs, "collectives", a, columns=COLUMNS, backend_reason="; ".join(reasons), **meta)
    wrong = [f"{r['op']} {r['size_bytes']} B n={r['world_size']}" for r in recs if not r["correct"]]
    if wrong and launch.is_leader():
        print(f"data check FAILED for: {', '.join(wrong)}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
