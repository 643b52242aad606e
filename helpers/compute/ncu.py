"""Bytes per memory level from Nsight Compute, for the hierarchical roofline (chapter 28).

Nsight Compute (``ncu``) replays each kernel and reads hardware counters. Three of them give a kernel's traffic
at each level of a GPU's memory hierarchy (Nsight Compute's Profiling Guide, "Metrics Decoder"; the same
counters feed its ``SpeedOfLight_HierarchicalTensorRooflineChart`` section):

* ``l1tex__t_bytes.sum`` — bytes the SMs requested from L1/TEX (all of them: hits and misses);
* ``lts__t_bytes.sum``  — bytes L2 served or accepted (the L1 misses, atomics, writes);
* ``dram__bytes.sum``   — bytes read from and written to HBM.

``ncu`` flushes the caches before each replayed kernel (``--cache-control all``, the default), so the HBM bytes
are the kernel's compulsory traffic. FLOPs are counted, not read from counters (the count is exact for the
workloads below; Tensor Core instruction counters differ by architecture). Times use ``--clock-control none``
so the GPU keeps its own clocks, as the rest of the book's recordings do.

    python -m helpers ncu traffic --json --out traffic.json      # on a GPU machine with ncu on PATH
    python -m helpers ncu parse report.csv --json                # read an existing ``ncu --csv`` output
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import sys
from dataclasses import dataclass

from helpers.core import inputs, results
from helpers.formulas import flops

METRICS = ("gpu__time_duration.sum", "l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum")
_SCALE = {"": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "KB": 1e3, "MB": 1e6,
          "GB": 1e9, "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1, "ns": 1e-9, "us": 1e-6,
          "ms": 1e-3, "s": 1, "cycle": 1, "%": 1, "inst": 1, "sector": 1, "request": 1, "block": 1,
          "thread": 1, "warp": 1, "register/thread": 1, "hz": 1, "Mhz": 1e6, "Ghz": 1e9}


@dataclass(frozen=True)
class KernelCounters:
    kernel_id: int
    kernel_name: str
    metrics: dict                # metric name -> value in base units (bytes, seconds, …); absent if ncu said n/a


@dataclass(frozen=True)
class Traffic:
    workload: str
    flop: float                  # counted
    n_kernels: int
    time_s: float                # sum of the kernels' gpu__time_duration
    l1_bytes: float
    l2_bytes: float
    hbm_bytes: float
    tflops: float                # flop / time_s / 1e12
    intensity_l1: float          # FLOP per byte at each level
    intensity_l2: float
    intensity_hbm: float


_GROUPED_EN = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")        # 1,234,567.5 (en, as ncu prints)
_GROUPED_DOT = re.compile(r"[+-]?[0-9]{1,3}(?:\.[0-9]{3})+(?:,[0-9]+)?")       # 2.508.800 or 1.234,5


def number(text: str, unit: str = "") -> float | None:
    """A value as ncu prints it: '1,234.5' (en locale: ',' groups thousands), '2.508.800' (grouping dots),
    '1.234,5' (grouping dots and a decimal comma), 'n/a' → None. A comma that groups no thousands ('1,5',
    '12,34') is refused: a decimal comma or a thousands separator cannot be told apart there."""
    t = text.strip()
    if t in ("", "n/a", "N/A"):
        return None
    if _GROUPED_EN.fullmatch(t):
        t = t.replace(",", "")
    elif _GROUPED_DOT.fullmatch(t) and (t.count(".") > 1 or "," in t):
        t = t.replace(".", "").replace(",", ".")
    elif "," in t:
        raise inputs.BadInput(f"ncu value {t[:40]!r}: its comma groups no thousands, so it may be a decimal comma "
                              "(1,5 = 1.5?) or a typo; rerun ncu with LC_ALL=C (or en_US.UTF-8) so values read "
                              "1,234.5")
    if unit not in _SCALE:
        raise ValueError(f"ncu unit {unit!r} is not known: add it to helpers.compute.ncu._SCALE with its scale")
    # ASCII digits, finite, not negative (a byte or FLOP count cannot be): the one strict parser
    return inputs.number(t, what=f"ncu value {text.strip()[:40]!r}") * _SCALE[unit]


def parse_csv(text: str) -> list[KernelCounters]:
    """``ncu --csv`` output (one row per kernel and metric) into one record per kernel launch.

    Lines before the header (``==PROF==`` banners, the program's own output) are skipped; an ``==ERROR==`` line
    before any data is raised with ncu's words (e.g. ERR_NVGPUCTRPERM: no permission to read the counters)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith('"ID"') or ln.startswith("ID,")), None)
    if start is None:
        errs = [ln for ln in lines if "==ERROR==" in ln]
        raise ValueError("no ncu CSV header (a line starting with \"ID\") found"
                         + (f"; ncu said: {errs[0].strip()}" if errs else
                            "; run ncu with --csv and --metrics (or --page raw)"))
    rows = csv.DictReader(io.StringIO("\n".join(ln for ln in lines[start:] if not ln.startswith("=="))))
    need = {"ID", "Kernel Name", "Metric Name", "Metric Value"}
    if not need <= set(rows.fieldnames or ()):
        raise ValueError(f"ncu CSV header lacks {sorted(need - set(rows.fieldnames or ()))}: "
                         "use the default --page details layout with --csv")
    kernels: dict[int, KernelCounters] = {}
    for r in rows:
        if not r.get("Metric Name") or r.get("ID") in (None, ""):
            continue
        kid = int(number(r["ID"]))
        k = kernels.setdefault(kid, KernelCounters(kid, r["Kernel Name"], {}))
        v = number(r["Metric Value"], r.get("Metric Unit") or "")
        if v is not None:
            k.metrics[r["Metric Name"]] = v
    if not kernels:
        raise ValueError("ncu CSV has a header but no kernel rows: did the profiled range launch any kernel?")
    return list(kernels.values())


def traffic(workload: str, flop: float, kernels: list[KernelCounters]) -> Traffic:
    """Sum the counters of a workload's kernels and place it at each level: I = FLOPs ÷ that level's bytes."""
    def total(m):
        vals = [k.metrics[m] for k in kernels if m in k.metrics]
        if not vals:
            raise ValueError(f"{workload}: no kernel reported {m}; profile with --metrics {','.join(METRICS)}")
        return sum(vals)
    t, l1, l2, hbm = (total(m) for m in METRICS)
    return Traffic(workload, flop, len(kernels), t, l1, l2, hbm, flop / t / 1e12,
                   flop / l1 if l1 else float("inf"), flop / l2 if l2 else float("inf"),
                   flop / hbm if hbm else float("inf"))


def workloads() -> dict:
    """name -> (flop, fn building inputs and returning the call to profile), or (flop, argv of a ``python`` command
    that profiles its own call between cudaProfilerStart/Stop). CUDA only."""
    import torch
    import torch.nn.functional as F

    def gemm(m, n, k):
        def make():
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            return lambda: a @ b
        return flops.gemm_flops(m, n, k), make

    def elementwise(fn, n, flop_per_element, dtype=torch.bfloat16):
        def make():
            x = torch.randn(n // 4096, 4096, device="cuda", dtype=dtype)
            return lambda: fn(x)
        return float(flop_per_element * n), make

    def attention(b=4, h=32, s=2048, d=128):
        def make():
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            return lambda: F.scaled_dot_product_attention(q, k, v)
        return 4.0 * b * h * s * s * d, make             # QKᵀ and PV, 2 FLOPs per multiply-add, not causal

    def progression(var, n=4096):      # the compute-efficiency chapter's matmul steps, run by the kernels tool
        return flops.gemm_flops(n, n, n), ["-m", "helpers", "kernels", "ncu-step", "--step", var, "--n", str(n)]

    steps = {f"matmul_{k}": progression(v) for k, v in (
        ("naive_fp32", "naive"), ("tiled_fp32", "tiled"), ("cublas_fp32", "cuBLAS (torch.mm, fp32)"),
        ("triton_bf16", "Triton tl.dot (bf16, Tensor Cores)"), ("cublas_bf16", "cuBLAS (torch.mm, bf16)"))}
    return {**steps, "gemm_8192_bf16": gemm(8192, 8192, 8192), "gemm_1024_bf16": gemm(1024, 1024, 1024),
            "gemv_decode_bf16": gemm(1, 8192, 8192), "attention_bf16": attention(),
            "softmax_bf16": elementwise(lambda x: torch.softmax(x, -1), 2**24, 5),
            "layernorm_bf16": elementwise(lambda x: F.layer_norm(x, x.shape[-1:]), 2**24, 8),
            "triad_fp32": elementwise(lambda x: torch.add(x, x, alpha=3.0), 2**28, 2, torch.float32)}


def run_workload(name: str) -> None:
    """Build one workload, warm it up, then run it once between cudaProfilerStart/Stop (ncu
    ``--profile-from-start off`` profiles exactly that call)."""
    import torch

    table = workloads()
    if name not in table:
        raise ValueError(f"workload {name!r}: choose one of {sorted(table)}")
    torch.manual_seed(0)
    if isinstance(table[name][1], list):
        raise ValueError(f"workload {name!r} profiles itself: python {' '.join(table[name][1])}")
    from helpers.core import device
    device.profile_once(table[name][1]())


def profile(names: list[str], ncu: str = "ncu", timeout_s: float = 300.0) -> list[Traffic]:
    """Run ``ncu`` on each workload in its own process and read its counters."""
    exe = shutil.which(ncu)
    if exe is None:
        raise ValueError(f"{ncu!r} is not on PATH: install Nsight Compute (it ships with the CUDA toolkit) or "
                         "pass --ncu /path/to/ncu")
    table = workloads()
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown workload(s) {unknown}: choose from {sorted(table)}")
    out = []
    for name in names:
        target = table[name][1]                 # a command of its own (another tool's kernels) or one built here
        argv = target if isinstance(target, list) else ["-m", "helpers.compute.ncu", "workload", name]
        cmd = [exe, "--csv", "--clock-control", "none", "--profile-from-start", "off", "--metrics", ",".join(METRICS),
               sys.executable, *argv]
        p = inputs.run_program(cmd, timeout_s=timeout_s, what=f"ncu on {name}", env=dict(os.environ))
        if p.returncode != 0:
            raise RuntimeError(f"ncu on {name} exited {p.returncode}: {(p.stderr or p.stdout)[-400:]}")
        try:
            counters = parse_csv(p.stdout)
        except ValueError as e:                  # ncu's garbage is a failed run (1), not the user's bad input
            raise inputs.ProgramFailed(f"ncu on {name} printed no usable counters: {e}") from None
        out.append(traffic(name, table[name][0], counters))
    return out


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli

    ap = argparse.ArgumentParser(prog="python -m helpers ncu", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["traffic", "parse", "workload"])
    ap.add_argument("arg", nargs="?", help="parse: an ncu --csv file; workload: its name")
    ap.add_argument("--workloads", type=cli.csv_of(str), default=None, help="traffic: names (default: all but the matmul_* progression steps)")
    ap.add_argument("--ncu", default="ncu", help="the ncu executable (default: %(default)s)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.what == "workload":
        run_workload(a.arg or "")
        return 0
    if a.what == "parse":
        if not a.arg:
            ap.error("parse: give the ncu --csv file")
        recs = parse_csv(inputs.read_text(a.arg, what="ncu --csv output"))
        results.emit(recs, "ncu-counters", a)
        return 0
    names = a.workloads or [n for n in workloads() if not n.startswith("matmul_")]   # matmul_*: by name only
    results.emit(profile(names, a.ncu), "ncu-traffic", a, metrics=list(METRICS),
                 method="ncu --csv --clock-control none --profile-from-start off (caches flushed per kernel)")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
