"""The book's micro-benchmark suite, each result as a % of the device's limit (chapter 15).

    python -m helpers bench gemm  --json          # GEMM ceiling per dtype, MAMF method   (helpers.compute.gemm)
    python -m helpers bench membw --json          # STREAM copy/scale/add/triad/dot       (helpers.compute.membw)
    python -m helpers bench copy  --json          # host↔device copies, pinned/pageable   (helpers.compute.transfer)
    python -m helpers bench hpl   --json          # an HPL-style dense solve, fp64        (helpers.compute.hplbench)
    python -m helpers bench all   --out assets/measurements/h200/bench.json
    python -m helpers bench gemm  --sweep --dtypes bf16,fp8 --out gemm_sweep.json   # MAMF-like shape sweep

Every record carries ``kind``, ``dtype``, a shape or ``size_bytes``, ``time_s``, ``tflops`` or ``bw_GBps``, and
``pct_of_peak`` against the datasheet row of ``helpers.core.specs`` — or null with the reason in ``peak_note`` when
the device has no row (every CPU). The JSON document adds provenance (``helpers.core.results``) and the ``skipped``
list (dtype or backend, reason). Units: 1 TFLOP/s = 10^12 FLOP/s, 1 GB/s = 10^9 B/s.

On one GPU this is a single process. On a node, run one copy per GPU to find a slow one::

    for i in $(seq 0 7); do CUDA_VISIBLE_DEVICES=$i python -m helpers bench gemm --json --out gemm.$i.json & done
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, results
from helpers.compute import gemm, hplbench, membw, peaks

COLUMNS = {
    "gemm": ["method", "dtype", "shape", "time_s", "tflops", "median_tflops", "pct_of_peak", "sm_clock_MHz_median",
             "power_W_median"],
    "membw": ["backend", "level", "op", "n_elements", "size_bytes", "time_s", "bw_GBps", "pct_of_peak",
              "ratio_to_torch"],
    "copy": ["direction", "pinned", "size_bytes", "time_s", "bw_GBps", "best_bw_GBps", "pct_of_peak"],
    "hpl": ["dtype", "n", "time_s", "tflops", "scaled_residual", "passed", "pct_of_peak"],
}


@dataclass(frozen=True)
class CopyResult:
    kind: str            # "copy"
    direction: str       # h2d | d2h | h2h (CPU-only machine: a host memcpy, said so)
    pinned: bool
    dtype: str
    size_bytes: int
    time_s: float        # median (helpers.compute.transfer)
    bw_GBps: float       # size_bytes / time_s / 1e9, one direction
    best_bw_GBps: float
    peak_GBps: float | None
    pct_of_peak: float | None   # of best_bw_GBps against the PCIe link, one direction
    peak_note: str
    device: str


def cpu_threads(max_shared_cores: int = 2) -> str:
    """The labs' CPU thread policy, in one place; returns the reason. On a machine with ``max_shared_cores`` or
    fewer, the notebook's kernel and other processes share the cores, and a 2-thread parallel region stalls for a
    scheduler tick whenever another process holds one of them: time with one torch thread there."""
    import os

    import torch

    if torch.cuda.is_available():
        return f"GPU present: torch's {torch.get_num_threads()} CPU threads left as they are"
    cores = os.cpu_count() or 1
    if cores <= max_shared_cores:
        torch.set_num_threads(1)
        return (f"{cores} CPU cores, shared with whatever else runs here: timing with 1 torch thread "
                "(2-thread regions stall whenever another process holds a core)")
    return f"{cores} CPU cores: timing with torch's {torch.get_num_threads()} threads"


def copy(sizes_bytes=None, repeats: int = 10, device=None) -> list[CopyResult]:
    """Host↔device copy bandwidth through ``helpers.compute.transfer`` with the PCIe link as the limit."""
    import torch

    from helpers.core import specs
    from helpers.compute import transfer
    from helpers.core.device import pick_device

    dev = pick_device()[0] if device is None else torch.device(device)
    if sizes_bytes is None:
        sizes_bytes = (2**20, 2**24, 2**28, 2**30) if dev.type == "cuda" else (2**20, 2**24, 2**26)
    out = []
    for r in transfer.measure(sizes_bytes=sizes_bytes, pinned=(True, False), directions=("h2d", "d2h"),
                              repeats=repeats, device=dev):
        pk, note = None, "host→host copy on a machine without a GPU: there is no host↔device link to compare with"
        if r.direction != "h2h":
            s = specs.lookup(r.device, warn=False)
            if s is None:
                note = f"GPU {r.device!r} is not in helpers/core/data/gpu_specs.yaml"
            else:
                pk = specs.pcie_GBps(s.pcie_gen, s.pcie_lanes)
                note = f"PCIe gen{s.pcie_gen} x{s.pcie_lanes} one direction after encoding (helpers.core.specs)"
        out.append(CopyResult("copy", r.direction, r.pinned, "fp32", r.size_bytes, r.time_s, r.bw_GBps,
                              r.best_bw_GBps, pk, None if pk is None else 100 * r.best_bw_GBps / pk, note,
                              peaks.device_name(dev) if r.direction == "h2h" else r.device))
    return out


def run_all(quick: bool = False, skipped: list | None = None) -> list:
    """gemm + membw + copy + hpl with each module's defaults (``quick``: smaller CPU sweeps for notebooks)."""
    kw = dict(shapes=((256, 256, 256), (512, 512, 512)), budget_s=0.15) if quick else {}
    recs: list = gemm.measure(dtypes=tuple(gemm.DTYPES), skipped=skipped, **kw)
    recs += membw.measure(skipped=skipped, **({"repeats": 5} if quick else {}))
    recs += copy(repeats=5 if quick else 10)
    recs += hplbench.hpl(n=512 if quick else None)
    return recs


def summary(records) -> list[dict]:
    """The headline of each benchmark, one row each: ``what`` is a stable key (e.g. "GEMM bf16") so that two
    machines' summaries can be joined; ``detail`` says which shape, op or size gave the best value."""
    rows = []
    get = gemm._get

    def row(what, detail, value, unit, pct, ratio=None, clock=None, power=None):
        rows.append({"what": what, "detail": detail, "value": value, "unit": unit, "pct_of_peak": pct,
                     "ratio_to_plain": ratio, "sm_clock_MHz": clock, "power_W": power})

    for dt in gemm.DTYPES:
        r = gemm.best(records, dt)
        if r is not None:
            row(f"GEMM {dt}", f"best shape {get(r, 'shape')}", get(r, "tflops"), "TFLOP/s", get(r, "pct_of_peak"),
                gemm.ratio_to_plain(records, dt), _opt(r, "sm_clock_MHz_median"), _opt(r, "power_W_median"))
        r = gemm.best(records, dt, "sustained")
        if r is not None:
            row(f"GEMM {dt} sustained", f"best shape {get(r, 'shape')}, back to back", get(r, "tflops"), "TFLOP/s",
                get(r, "pct_of_peak"), None, _opt(r, "sm_clock_MHz_median"), _opt(r, "power_W_median"))
    for op in membw.OPS:
        rs = [r for r in records if get(r, "kind") == "membw" and get(r, "backend") == "cupy"
              and get(r, "op") == op and _opt(r, "ratio_to_torch") is not None]
        for r in rs:
            row(f"cupy {op} / torch {op}", f"{get(r, 'level')}, {get(r, 'n_elements')} fp32", _opt(r, "ratio_to_torch"),
                "ratio", None)
    for level in ("memory", "cache"):
        r = membw.best(records, level)
        if r is not None:
            row(f"{level} bandwidth", f"{get(r, 'backend')} {get(r, 'op')}, {get(r, 'n_elements')} fp32",
                get(r, "bw_GBps"), "GB/s", get(r, "pct_of_peak"))
    for pinned in (True, False):
        cs = [r for r in records if get(r, "kind") == "copy" and get(r, "pinned") == pinned]
        for direction in sorted({get(r, "direction") for r in cs}):
            r = max((c for c in cs if get(c, "direction") == direction), key=lambda c: get(c, "best_bw_GBps"))
            row(f"copy {direction} {'pinned' if pinned else 'pageable'}", f"{get(r, 'size_bytes')} B",
                get(r, "best_bw_GBps"), "GB/s", get(r, "pct_of_peak"))
    for r in (r for r in records if get(r, "kind") == "hpl"):
        row("HPL-style fp64 solve", f"n = {get(r, 'n')}", get(r, "tflops"), "TFLOP/s", get(r, "pct_of_peak"))
    return rows


def _opt(r, key):
    """A field that older records may lack (added in issue 11): None when absent."""
    return r.get(key) if isinstance(r, dict) else getattr(r, key, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers bench", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["gemm", "membw", "copy", "hpl", "all"])
    ap.add_argument("--dtypes", default=",".join(gemm.DTYPES), help="gemm: comma-separated (default %(default)s)")
    ap.add_argument("--shapes", default="", help="gemm: m×n×k list, e.g. 4096x4096x4096,8192x8192x8192")
    ap.add_argument("--sweep", action="store_true", help="gemm: the MAMF-like shape sweep gemm.GPU_SWEEP")
    ap.add_argument("--sustain-s", type=cli.bounded_float(0.0, 600.0), default=None,
                    help="gemm: seconds of back-to-back GEMMs per shape for the sustained rate "
                         "(default 1.0 on a GPU, 0 = none on a CPU)")
    ap.add_argument("--elements", type=cli.bounded_int(1024, 2**34), default=None, help="membw: array length (default: ≥ 4 × LLC)")
    ap.add_argument("--n", type=cli.bounded_int(16, 65536), default=None, help="hpl: matrix side")
    ap.add_argument("--quick", action="store_true", help="all: small CPU sweeps (about 20 s on 2 cores)")
    ap.add_argument("--threads", type=cli.bounded_int(1, 4096), default=None,
                    help="torch CPU threads (default: bench.cpu_threads(): 1 on machines with ≤ 2 cores)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    skipped: list = []
    if a.threads is None:
        threads_note = cpu_threads()
    elif a.threads < 1:
        ap.error(f"--threads {a.threads}: use 1 or more")
    else:
        import torch
        torch.set_num_threads(a.threads)
        threads_note = f"--threads {a.threads}"
    try:
        shapes = [tuple(int(x) for x in s.lower().replace("×", "x").split("x")) for s in a.shapes.split(",") if s]
        if any(len(s) != 3 for s in shapes):
            raise ValueError(f"--shapes {a.shapes!r}: write each as MxNxK, e.g. 4096x4096x4096")
        if a.sweep and shapes:
            raise ValueError("--sweep and --shapes: give one of them")
        if a.what == "gemm":
            # the sweep follows the calibration in issue 11 (best of 30 calls, the cache flushed between them, on
            # a GPU that starts cool): no untimed warm-up run, 3 warm-up calls, 10 s of idle before each dtype
            sweep = dict(warmup=3, repeats=30, warm_s=0.0, cool_s=10.0) if a.sweep else {}
            recs = gemm.measure(dtypes=tuple(d for d in a.dtypes.split(",") if d),
                                shapes=gemm.GPU_SWEEP if a.sweep else (shapes or None), skipped=skipped,
                                sustain_s=a.sustain_s, **sweep)
        elif a.what == "membw":
            from helpers.core import gpusampler

            with gpusampler.Sampler.for_current() as smp:            # clock, power, throttle reasons over the whole run
                recs = membw.measure(n_elements=a.elements, skipped=skipped)
            sampled = smp.summary()
        elif a.what == "copy":
            recs = copy()
        elif a.what == "hpl":
            recs = hplbench.hpl(n=a.n)
        else:
            recs = run_all(quick=a.quick, skipped=skipped)
    except ValueError as e:
        ap.error(str(e))
    kind = "bench" if a.what == "all" else f"bench-{a.what}"
    meta = dict(skipped=[{"what": w, "reason": why} for w, why in skipped], summary=summary(recs),
                threads=threads_note)
    if a.what == "membw":
        meta["gpu_sampler"] = sampled
    if a.what == "all" and not a.json:          # mixed kinds: one table per kind, then the headline rows
        doc = results.document(recs, kind, **meta)
        print(f"# {kind} · {doc['provenance']['device']} · {doc['provenance']['date_utc']}")
        for k, cols in COLUMNS.items():
            print(f"\n## {k}\n" + results.table([r for r in recs if r.kind == k], cols).to_string(index=False))
        print("\n## summary\n" + results.table(meta["summary"]).to_string(index=False))
        if a.out:
            results.save(doc, a.out)
    else:
        doc = results.emit(recs, kind, a, columns=None if a.what == "all" else COLUMNS[a.what], **meta)
    if not a.json and doc["skipped"]:
        print("skipped: " + "; ".join(f"{s['what']}: {s['reason']}" for s in doc["skipped"]))
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
