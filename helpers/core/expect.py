"""What to expect on your GPU: sourced result bands per GPU type, and a verdict on a run (appendix "What to expect").

    python -m helpers expect --bands --gpu "NVIDIA H100 80GB HBM3" --json   # the bands for one GPU
    python -m helpers expect my_gemm.json assets/measurements/h200/*.json   # judge records written with --out

    from helpers.core import expect
    expect.line(812.0, "gemm_bf16_tflops", "NVIDIA H200")
    # 'H200 SXM bf16 GEMM (MAMF) 812 TFLOP/s: within the band 715–874 (measured, ml-engineering MAMF table)'

The bands live in ``data/expect_bands.yaml`` (every row: source URL, the quoted figure, kind measured/derived);
which record of which tool is judged against which band is ``data/expect_map.yaml``. GPU names are matched by
``helpers.core.specs`` (as nvidia-smi prints them). A value below its band gets its likely causes, those the
record shows first (``helpers.core.expect_causes``); an unknown GPU or metric gives "no band", never an error.
"""
from __future__ import annotations

import argparse
import glob
import json
import sys
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from helpers.core import results, specs
from helpers.core.expect_causes import causes

DATA = Path(__file__).parent / "data"
LABELS = {"gemm_bf16_tflops": "bf16 GEMM (MAMF)", "gemm_fp8_tflops": "fp8 GEMM (MAMF)",
          "hbm_triad_GBps": "memory STREAM triad", "h2d_pinned_GBps": "pinned host→device copy",
          "d2h_pinned_GBps": "pinned device→host copy", "p2p_GBps": "GPU↔GPU copy, one direction",
          "allreduce_busbw_8gpu_ring_GBps": "all-reduce busbw, 8 GPUs, ring",
          "allreduce_busbw_8gpu_nvls_GBps": "all-reduce busbw, 8 GPUs, NVLS",
          "nvme_seq_read_GBps": "local NVMe sequential read", "llm_train_mfu": "LLM training MFU",
          "llm_decode_batch1_fraction_of_hbm_bound": "batch-1 decode, fraction of the HBM bound",
          "llm_train_mfu_1b_node": "LLM training MFU, ~1B model, one GPU or node (PaLM count)",
          "llm_decode_batch64_fraction_of_hbm_bound": "batch-64 decode, fraction of the HBM bound"}
CPU_NAMES = ("cpu", "cpu laptop")


@dataclass(frozen=True)
class Band:
    metric: str
    gpu: str
    low: float
    typical: float
    high: float
    unit: str
    kind: str                  # measured | derived | datasheet
    source: str                # URL
    source_name: str
    bibkey: str
    quote: str
    fraction: tuple[float, ...] | None
    rule: str
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    file: str
    metric: str
    gpu: str                   # the band's GPU row ("" when none)
    value: float | None
    unit: str
    verdict: str               # within | below | above | no band
    low: float | None
    typical: float | None
    high: float | None
    kind: str
    source: str
    causes: tuple[str, ...]
    reason: str                # for "no band": why; otherwise what was judged


@lru_cache(maxsize=1)
def _raw() -> dict:
    return yaml.safe_load((DATA / "expect_bands.yaml").read_text())


@lru_cache(maxsize=1)
def all_bands() -> tuple[Band, ...]:
    names = {f.name for f in fields(Band)}
    out = []
    for r in _raw()["bands"]:
        if set(r) - names or not str(r.get("source", "")).startswith("http"):
            raise ValueError(f"expect_bands.yaml: row {r.get('metric')}/{r.get('gpu')} has unknown keys or no source URL")
        r = dict(r, fraction=tuple(r["fraction"]) if r.get("fraction") else None)
        out.append(Band(**r))
    return tuple(out)


@lru_cache(maxsize=1)
def mapping() -> tuple[dict, ...]:
    return tuple(yaml.safe_load((DATA / "expect_map.yaml").read_text()))


def gpu_key(name: str | None) -> str | None:
    """The band table's GPU row for a name as nvidia-smi / torch / a record prints it; "cpu" for the CPU paths;
    None when unknown (the spec table's matcher, then the extra GPUs' aliases; no fuzzy matching)."""
    if not name or not str(name).strip():
        return None
    n = str(name).strip()
    if n.lower() in CPU_NAMES or n.lower().startswith("cpu"):
        return "cpu"
    s = specs.lookup(n, warn=False)
    if s is not None:
        return s.name
    key = specs._norm(n)
    for gpu, row in _raw().get("extra_gpus", {}).items():
        if key in {specs._norm(a) for a in (gpu, *row.get("aliases", ()))}:
            return gpu
    return None


def bands(gpu: str | None = None, metric: str | None = None) -> list[Band]:
    """Band rows, optionally for one GPU (any name gpu_key understands) and/or one metric."""
    key = gpu_key(gpu) if gpu else None
    return [b for b in all_bands() if (gpu is None or b.gpu == key) and (metric is None or b.metric == metric)]


def band(metric: str, gpu: str) -> Band | None:
    rows = bands(gpu, metric) if gpu_key(gpu) else []
    return rows[0] if rows else None


def _no_band_reason(metric: str, gpu: str) -> str:
    if metric not in {b.metric for b in all_bands()}:
        return f"unknown metric {metric!r} (known: {sorted(LABELS)})"
    if gpu_key(gpu) is None:
        return f"unknown GPU {gpu!r}: not in the spec table nor in expect_bands.yaml"
    return f"no published or derived band for {metric} on {gpu_key(gpu)}"


def judge(value: float | None, metric: str, gpu: str, record: Any = None, context: dict | None = None,
          file: str = "") -> Verdict:
    """One value against its band: within / below (with causes) / above (with method errors) / no band."""
    b = band(metric, gpu) if gpu else None
    unit = b.unit if b else ""
    if b is None or value is None:
        why = _no_band_reason(metric, str(gpu)) if b is None else "no value in the record"
        return Verdict(file, metric, "", value, unit, "no band", None, None, None, "", "", (), why)
    v = "below" if value < b.low else "above" if value > b.high else "within"
    return Verdict(file, metric, b.gpu, float(value), unit, v, b.low, b.typical, b.high, b.kind, b.source,
                   causes(metric, v, record, dict(context or {}, gpu=gpu)), "")


def _fmt(x: float) -> str:
    return f"{x:.2f}" if abs(x) < 1 else f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def line(record_or_value: Any, metric: str, gpu: str) -> str:
    """A one-line verdict for a chapter: 'H200 SXM bf16 GEMM (MAMF) 812 TFLOP/s: within the band 715–874 (…)'."""
    rec = record_or_value if not isinstance(record_or_value, (int, float)) else None
    value = record_or_value if rec is None else _value_of(rec, metric)
    v = judge(value, metric, gpu, rec)
    label = LABELS.get(metric, metric)
    if v.verdict == "no band":
        return f"{gpu} {label}: no band ({v.reason})"
    b = band(metric, gpu)
    s = (f"{b.gpu} {label} {_fmt(v.value)} {v.unit}: {v.verdict} the band {_fmt(b.low)}–{_fmt(b.high)} "
         f"({b.kind}, {b.source_name})")
    return s + (f"; likely: {v.causes[0]}" if v.causes else "")


def _get(r: Any, k: str, default=None):
    return r.get(k, default) if isinstance(r, dict) else getattr(r, k, default)


def _value_of(rec: Any, metric: str) -> float | None:
    for rule in mapping():
        if rule["metric"] == metric and _get(rec, rule["field"]) is not None:
            return float(_get(rec, rule["field"])) * rule.get("scale", 1.0)
    return None


def _matches(rec: Any, where: dict) -> bool:
    return all((_get(rec, k) in v) if isinstance(v, list) else _get(rec, k) == v for k, v in where.items())


def judge_document(doc: dict, file: str = "") -> list[Verdict]:
    """Every mapped metric of a document written by a book tool (--out), its best value judged."""
    prov, recs, out = doc.get("provenance", {}), doc.get("records", []), []
    clocks = [_get(r, "sm_clock_MHz_median") for r in recs if _get(r, "sm_clock_MHz_median")]
    ctx = {"sm_clock_MHz_max": max(clocks) if clocks else None, "fs_type": doc.get("fs_type")}
    for rule in mapping():
        if doc.get("kind") not in rule["kinds"]:
            continue
        sel = [r for r in recs if _matches(r, rule["where"]) and _get(r, rule["field"]) is not None]
        if not sel:
            continue
        best = max(sel, key=lambda r: _get(r, rule["field"]))
        dev = _get(best, "device")
        gpu = dev if dev and not str(dev).startswith(("cuda", "cpu")) else prov.get("device", "")
        if str(dev).startswith("cpu") or not prov.get("gpu_count", 1):
            gpu = "cpu"
        need = [f"{k}={_get(best, k)!r} (the band needs {v!r})" for k, v in rule.get("need", {}).items()
                if _get(best, k) != v]
        need += [f"{k}={v!r} in the document" for k, v in rule.get("skip_doc", {}).items() if doc.get(k) == v]
        value = float(_get(best, rule["field"])) * rule.get("scale", 1.0)
        if need:
            out.append(Verdict(file, rule["metric"], "", value, "", "no band", None, None, None, "", "", (),
                               "; ".join(need)))
            continue
        out.append(judge(value, rule["metric"], gpu, best, ctx, file))
    return out


def judge_files(paths: list[str]) -> list[Verdict]:
    out = []
    for p in paths:
        doc = json.loads(Path(p).read_text())
        vs = judge_document(doc, Path(p).name)
        out += vs or [Verdict(Path(p).name, "", "", None, "", "no band", None, None, None, "", "", (),
                              f"kind {doc.get('kind')!r}: no metric of expect_map.yaml reads it")]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers expect", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="JSON documents written by the book's tools (--out)")
    ap.add_argument("--bands", action="store_true", help="print the band table instead of judging files")
    ap.add_argument("--gpu", help="with --bands: only this GPU (as nvidia-smi prints it, or 'cpu')")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.bands:
        if a.gpu and gpu_key(a.gpu) is None:
            print(f"error: --gpu {a.gpu!r} is not a known GPU; pass the name nvidia-smi prints, e.g. 'NVIDIA H200'",
                  file=sys.stderr)
            return 2
        rows = bands(a.gpu)
        results.emit(rows, "expect-bands", a, ["gpu", "metric", "low", "typical", "high", "unit", "kind", "source_name"])
        return 0
    paths = [p for f in a.files for p in (sorted(glob.glob(f)) or [f])]
    if not paths:
        print("error: give JSON files to judge (python -m helpers expect my.json) or --bands", file=sys.stderr)
        return 2
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        print(f"error: no such file {missing[0]!r}: pass documents written with --out FILE", file=sys.stderr)
        return 2
    try:
        vs = judge_files(paths)
    except (json.JSONDecodeError, AttributeError) as e:
        print(f"error: not a book JSON document ({e}): pass files written with --out FILE", file=sys.stderr)
        return 2
    results.emit(vs, "expect", a, ["file", "metric", "gpu", "value", "unit", "verdict", "low", "high", "kind", "reason"])
    return 0


def as_dict(x: Band | Verdict) -> dict:
    return asdict(x)


if __name__ == "__main__":
    sys.exit(main())
