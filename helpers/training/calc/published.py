"""Published training runs, and the performance model checked against them out of sample (chapter 28; chapters 01,
16 and 29 read the runs).

``data/published_runs.yaml`` holds each run's parameters, tokens, GPU type and count, GPU-hours or days as published,
MFU or TFLOP/s where given, and the source URL with the sentence that says so. :func:`check_published` predicts every
run's GPU-hours, days and MFU from the others (leave-one-out) with 6·N·D (``helpers.formulas.flops``) and the goodput
model of ``helpers.training.calc.perfmodel``, and :func:`error_summary` says how far off it is.

    run = next(r for r in published.PUBLISHED_RUNS if r.name == "LLaMA-65B")
    run.implied_mfu()                       # 6·N·D ÷ (GPU-hours × 3600 × peak)
    published.error_summary(published.check_published())
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from helpers.core import specs
from helpers.formulas import flops
from helpers.training.calc import perfmodel

RUNS_FILE = Path(__file__).parents[1] / "data" / "published_runs.yaml"   # the wing's data folder


@dataclass(frozen=True)
class PublishedRun:
    name: str
    n_params: float          # active parameters per token (MoE: not the total)
    n_tokens: float
    gpu: str                 # a helpers.core.specs name
    n_gpus: int | None
    gpu_hours: float | None  # as published
    source: str
    says: str = ""
    note: str = ""
    days: float | None = None
    mfu_published: float | None = None
    tflops_published: float | None = None
    n_params_total: float | None = None

    @property
    def spec(self):
        return specs.lookup(self.gpu, warn=False)

    @property
    def total_gpu_hours(self) -> float | None:
        """Published GPU-hours, else n_gpus × days × 24 when both are published (derived), else None."""
        if self.gpu_hours:
            return self.gpu_hours
        return self.n_gpus * self.days * 24 if self.n_gpus and self.days else None

    def implied_mfu(self, peak_tflops: float | None = None) -> float:
        """6·N·D ÷ (GPU-hours × 3600 × peak): everything that was not useful work counts against it."""
        peak = peak_tflops or self.spec.training_peak()[0]
        gpu_s = self.total_gpu_hours * 3600
        return flops.mfu(self.n_tokens / gpu_s, flops.training_flops_per_token(self.n_params), 1, peak)


def load_runs(path: Path = RUNS_FILE) -> tuple[PublishedRun, ...]:
    """The published runs of ``published_runs.yaml``; every row needs a source URL and a known GPU."""
    known = {f.name for f in fields(PublishedRun)}
    out = []
    for r in yaml.safe_load(Path(path).read_text()):
        if "layout" in r:           # a run with its parallel layout: helpers.training.calc.mfumodel reads it
            continue
        if set(r) - known:
            raise ValueError(f"{path.name}: run {r.get('name')!r} has unknown keys {sorted(set(r) - known)}")
        if not str(r.get("source", "")).startswith("http"):
            raise ValueError(f"{path.name}: run {r.get('name')!r} has no source URL")
        for k in ("n_params", "n_tokens", "gpu_hours", "days", "mfu_published", "tflops_published", "n_params_total"):
            if r.get(k) is not None:
                r[k] = float(r[k])          # YAML 1.1 reads 6.7e9 (no exponent sign) as a string
        run = PublishedRun(**r)
        if run.spec is None:
            raise ValueError(f"{path.name}: run {run.name!r} names GPU {run.gpu!r}, which is not in the spec table")
        out.append(run)
    return tuple(out)


PUBLISHED_RUNS = load_runs()


@dataclass(frozen=True)
class RunCheck:
    name: str
    gpu: str
    n_gpus: int | None
    published_gpu_hours: float | None
    predicted_gpu_hours: float | None
    gpu_hours_error: float | None        # predicted ÷ published − 1
    published_days: float | None
    predicted_days: float | None
    days_error: float | None
    published_mfu: float | None          # as published (MFU, or TFLOP/s ÷ peak where only that is given)
    predicted_mfu: float                 # the steady-state MFU the other runs give (leave-one-out)
    mfu_error: float | None
    goodput: float | None                # None when the job size is not published
    baseline_error: float | None         # GPU-hours error of 6ND at the median end-to-end MFU, no goodput term
    note: str = ""


def _err(pred, pub):
    return None if pred is None or not pub else pred / pub - 1


def check_published(runs=None, mfu: float | None = None, **goodput_kw) -> list[RunCheck]:
    """Predict each run's GPU-hours, days and MFU and compare with what was published, out of sample.

    The one fitted parameter is the steady-state MFU (MFU while training, before goodput losses); with
    ``mfu=None`` run i is predicted with the median steady-state MFU of the *other* runs (leave-one-out), so a
    run never predicts itself. Predicted GPU-hours = 6·N·D ÷ (peak · MFU) ÷ goodput(n_gpus); the peak is each
    run's own GPU (fp16 where it has no bf16). ``baseline_error`` repeats the prediction without the goodput term
    and with the median end-to-end MFU, as the model did before."""
    import statistics

    runs = PUBLISHED_RUNS if runs is None else runs
    peak = {r.name: r.spec.training_peak() for r in runs}
    good = {r.name: perfmodel.goodput(r.n_gpus, r.n_params_total or r.n_params, **goodput_kw).goodput
            if r.n_gpus else None for r in runs}
    fitted = [r for r in runs if r.total_gpu_hours]
    implied = {r.name: r.implied_mfu(peak[r.name][0]) for r in fitted}
    steady = {n: m / (good[n] or 1.0) for n, m in implied.items()}
    out = []
    for r in runs:
        others = [n for n in steady if n != r.name]
        m = mfu if mfu is not None else statistics.median(steady[n] for n in others)
        m_e2e = mfu if mfu is not None else statistics.median(implied[n] for n in others)
        total, pk = flops.training_flops(r.n_params, r.n_tokens), peak[r.name][0]
        g = good[r.name]
        pred_h = total / (pk * 1e12 * m) / 3600 / (g or 1.0)
        pred_d = pred_h / (r.n_gpus * 24) if r.n_gpus else None
        pub_mfu = r.mfu_published or (flops.utilization(r.tflops_published * 1e12, pk) if r.tflops_published else None)
        base = _err(total / (pk * 1e12 * m_e2e) / 3600, r.total_gpu_hours)
        notes = [x for x in (peak[r.name][1], "" if r.gpu_hours or not r.total_gpu_hours
                             else "published GPU-hours derived as GPUs × days × 24",
                             "" if r.n_gpus else "job size not published: no goodput term") if x]
        out.append(RunCheck(r.name, r.gpu, r.n_gpus, r.total_gpu_hours, pred_h, _err(pred_h, r.total_gpu_hours),
                            r.days, pred_d, _err(pred_d, r.days), pub_mfu, m, _err(m, pub_mfu), g, base,
                            "; ".join(notes)))
    return out


def error_summary(checks: list[RunCheck]) -> dict:
    """Median and worst absolute error of each compared quantity (fractions), and how many runs each has."""
    import statistics

    out = {}
    for key in ("gpu_hours_error", "days_error", "mfu_error", "baseline_error"):
        errs = [(abs(getattr(c, key)), c.name) for c in checks if getattr(c, key) is not None]
        if errs:
            worst = max(errs)
            out[key] = {"n": len(errs), "median": statistics.median(e for e, _ in errs), "worst": worst[0],
                        "worst_run": worst[1]}
    return out
