"""Performance models of LLM training as pure functions (chapter 28; chapter 01 sizes a cluster with them).

Each function is one published formula, with the paper it comes from; all rates are per GPU and dense.
Units in the names: ``*_tflops`` are 10^12 FLOP/s, ``*_bytes`` bytes, ``days`` 86 400 s.

* FLOPs of training: 6·N·D (N parameters, D tokens) — Kaplan et al. 2020, arXiv:2001.08361 §2.1; with the
  attention term, per token: Kaplan 6N + 6·n_layer·n_ctx·d_attn, PaLM 6N + 12·L·H·Q·T (arXiv:2204.02311 App. B).
* Utilisation: MFU = model FLOPs/s ÷ peak (recomputation not counted); HFU counts it (PaLM App. B).
* Megatron-LM (Narayanan et al. 2021, arXiv:2104.04473): parameters (eq. 2), FLOPs per iteration (eq. 3),
  end-to-end time 8·T·P / (n·X) (eq. 4, with activation recomputation; 6 without).
* Pipeline bubble (same paper, §2.2): (p − 1)/m of the ideal time; interleaved (p − 1)/(v·m).
* ZeRO model-state memory per GPU (Rajbhandari et al. 2020, arXiv:1910.02054 §5): 16Ψ bytes with mixed-precision
  Adam, partitioned over N_d data-parallel ranks by stage 1, 2, 3.
* Goodput: the share of wall-clock time that trains, given failures per GPU-day, restart time and checkpoint
  writes (Young 1974's optimal interval; failure rate from Llama 3, arXiv:2407.21783 Table 5).
* Capacity planning: GPU-hours of a year of jobs and the cluster size that runs them.
* Published runs (``data/published_runs.yaml``, each with its source) predicted out of sample: ``check_published``.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from helpers.core import specs

SECONDS_PER_DAY = 86_400.0
HOURS_PER_YEAR = 8_760.0


def _positive(**kw: float) -> None:
    for k, v in kw.items():
        if not v > 0:
            raise ValueError(f"{k}={v!r} must be > 0")


def _fraction(**kw: float) -> None:
    for k, v in kw.items():
        if not 0 < v <= 1:
            raise ValueError(f"{k}={v!r} must be a fraction in (0, 1], e.g. 0.45 for 45 %")


# ---------------------------------------------------------------- FLOPs and time

def training_flops(n_params: float, n_tokens: float) -> float:
    """Total training FLOPs ≈ 6·N·D: 2N per token forward, 4N backward (Kaplan et al. 2020)."""
    _positive(n_params=n_params, n_tokens=n_tokens)
    return 6.0 * n_params * n_tokens


def gpus_needed(total_flops: float, days: float, peak_tflops: float, mfu: float) -> float:
    """GPUs that deliver ``total_flops`` in ``days`` at ``mfu`` of a ``peak_tflops`` peak (fractional)."""
    _positive(total_flops=total_flops, days=days, peak_tflops=peak_tflops)
    _fraction(mfu=mfu)
    return total_flops / (days * SECONDS_PER_DAY * peak_tflops * 1e12 * mfu)


def training_days(n_params: float, n_tokens: float, n_gpus: float, peak_tflops: float, mfu: float) -> float:
    """Wall-clock days of a 6·N·D training run on ``n_gpus`` at ``mfu``."""
    _positive(n_gpus=n_gpus, peak_tflops=peak_tflops)
    _fraction(mfu=mfu)
    return training_flops(n_params, n_tokens) / (n_gpus * peak_tflops * 1e12 * mfu) / SECONDS_PER_DAY


def days_from_throughput(n_tokens: float, tokens_per_s_per_gpu: float, n_gpus: float) -> float:
    """Days to process ``n_tokens`` at a measured per-GPU token rate (what papers report)."""
    _positive(n_tokens=n_tokens, tokens_per_s_per_gpu=tokens_per_s_per_gpu, n_gpus=n_gpus)
    return n_tokens / (tokens_per_s_per_gpu * n_gpus) / SECONDS_PER_DAY


def flops_per_token(n_params: float, n_layers: int = 0, seq_len: int = 0, d_attn: int = 0,
                    form: str = "palm") -> float:
    """Training FLOPs per token, 6N plus the attention-score term.

    ``form="kaplan"``: 6N + 6·n_layer·n_ctx·d_attn (3 × Kaplan's forward 2N + 2·n_layer·n_ctx·d_attn, which counts
    the QKᵀ scores). ``form="palm"``: 6N + 12·L·H·Q·T with H·Q = d_attn (counts QKᵀ and the weighted sum of V).
    With ``n_layers=0`` both reduce to 6N."""
    _positive(n_params=n_params)
    if form not in ("kaplan", "palm"):
        raise ValueError(f"form={form!r}: use 'kaplan' (arXiv:2001.08361) or 'palm' (arXiv:2204.02311)")
    attn = n_layers * seq_len * d_attn
    return 6.0 * n_params + (6.0 if form == "kaplan" else 12.0) * attn


def utilization(flops_per_s_per_gpu: float, peak_tflops: float) -> float:
    """Achieved FLOP/s ÷ peak FLOP/s (a fraction). MFU or HFU depending on which FLOPs were counted."""
    _positive(flops_per_s_per_gpu=flops_per_s_per_gpu, peak_tflops=peak_tflops)
    return flops_per_s_per_gpu / (peak_tflops * 1e12)


def mfu(tokens_per_s: float, flops_per_token: float, n_gpus: float, peak_tflops: float) -> float:
    """Model FLOPs utilisation: tokens/s × model FLOPs per token ÷ (GPUs × peak). Recomputation not counted."""
    _positive(tokens_per_s=tokens_per_s, flops_per_token=flops_per_token, n_gpus=n_gpus)
    return utilization(tokens_per_s * flops_per_token / n_gpus, peak_tflops)


def hfu(tokens_per_s: float, hardware_flops_per_token: float, n_gpus: float, peak_tflops: float) -> float:
    """Hardware FLOPs utilisation: as ``mfu`` but counting what the GPUs executed, recomputation included."""
    return mfu(tokens_per_s, hardware_flops_per_token, n_gpus, peak_tflops)


# ---------------------------------------------------------------- Megatron-LM (Narayanan et al. 2021)

def megatron_params(n_layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """Eq. 2: P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h))."""
    _positive(n_layers=n_layers, hidden=hidden, vocab=vocab, seq_len=seq_len)
    l, h = n_layers, hidden
    return 12.0 * l * h * h * (1 + 13 / (12 * h) + (vocab + seq_len) / (12 * l * h))


def megatron_flops_per_iteration(batch: int, seq_len: int, n_layers: int, hidden: int, vocab: int,
                                 recompute: bool = True) -> float:
    """Eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with full activation recomputation;
    without it the forward is not repeated: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))."""
    _positive(batch=batch, seq_len=seq_len, n_layers=n_layers, hidden=hidden, vocab=vocab)
    B, s, l, h, V = batch, seq_len, n_layers, hidden, vocab
    c, d = (96.0, 16.0) if recompute else (72.0, 12.0)
    return c * B * s * l * h * h * (1 + s / (6 * h) + V / (d * l * h))


def megatron_training_days(n_tokens: float, n_params: float, n_gpus: float, tflops_per_gpu: float,
                           recompute: bool = True) -> float:
    """Eq. 4: end-to-end time ≈ 8·T·P / (n·X) with recomputation (6·T·P / (n·X) without)."""
    _positive(n_tokens=n_tokens, n_params=n_params, n_gpus=n_gpus, tflops_per_gpu=tflops_per_gpu)
    return (8.0 if recompute else 6.0) * n_tokens * n_params / (n_gpus * tflops_per_gpu * 1e12) / SECONDS_PER_DAY


def pipeline_bubble(p: int, m: int, v: int = 1) -> float:
    """Bubble time ÷ ideal time: (p − 1)/(v·m) for p stages, m micro-batches, v chunks per stage (interleaved)."""
    if p < 1 or m < 1 or v < 1:
        raise ValueError(f"p={p}, m={m}, v={v}: stages, micro-batches and chunks must be ≥ 1")
    return (p - 1) / (v * m)


def pipeline_bubble_of_total(p: int, m: int) -> float:
    """The same bubble as a share of the whole step: (p − 1)/(m + p − 1)."""
    b = pipeline_bubble(p, m)
    return b / (1 + b)


# ---------------------------------------------------------------- ZeRO (Rajbhandari et al. 2020)

def zero_memory_bytes(n_params: float, n_dp: int, stage: int) -> float:
    """Model-state bytes per GPU for mixed-precision Adam (16Ψ in all) under ZeRO ``stage`` over ``n_dp`` ranks:
    stage 1 partitions the optimizer states, 2 also the gradients, 3 also the weights. The formula lives in one
    place, ``helpers.training.calc.memory.model_states`` (chapter 06 teaches it); this is its total."""
    from helpers.training.calc import memory

    return memory.model_states(n_params, stage, n_dp, "mixed-adam").total_bytes


# ---------------------------------------------------------------- goodput (failures, restarts, checkpoints)

# Llama 3 (arXiv:2407.21783, Table 5): 419 unexpected interruptions in a 54-day snapshot on 16,384 H100s.
LLAMA3_FAILURES_PER_GPU_DAY = 419 / (54 * 16_384)
CHECKPOINT_BYTES_PER_PARAM = 14      # bf16 weights 2 + fp32 master 4 + Adam m, v 8 (gradients are not saved)


@dataclass(frozen=True)
class Goodput:
    """The share of wall-clock time that trains, for a job of ``n_gpus`` (Young's first-order model,
    J. W. Young 1974, "A first order approximation to the optimum checkpoint interval", CACM 17(9)).

    Failures arrive at λ = failures_per_gpu_day · n_gpus per day; each costs ``restart_s`` plus, on average,
    half a checkpoint interval of lost work; each checkpoint stalls training for ``checkpoint_write_s``.
    The interval is Young's optimum τ = √(2·C/λ). Lost fraction = C/τ + λ·(τ/2 + R)."""
    n_gpus: int
    failures_per_gpu_day: float
    restart_s: float
    checkpoint_write_s: float
    interval_s: float
    failures_per_day: float
    lost_fraction: float

    @property
    def goodput(self) -> float:
        return max(0.0, 1.0 - self.lost_fraction)


def goodput(n_gpus: int, n_params: float, failures_per_gpu_day: float = LLAMA3_FAILURES_PER_GPU_DAY,
            restart_s: float = 600.0, write_GBps_per_gpu: float = 0.25,
            checkpoint_bytes: float | None = None) -> Goodput:
    """Goodput of an ``n_gpus`` job training ``n_params`` parameters.

    Defaults (assumptions, stated so they can be argued with): the failure rate of Llama 3's 16K-GPU run;
    10 minutes to detect, reschedule and reload (``restart_s``); checkpoints of 14 B/parameter written at
    0.25 GB/s per GPU (2 GB/s per 8-GPU node; Llama 3's storage gave 16K GPUs 2-7 TB/s, 0.12-0.43 GB/s each)."""
    _positive(n_gpus=n_gpus, n_params=n_params, restart_s=restart_s, write_GBps_per_gpu=write_GBps_per_gpu)
    if failures_per_gpu_day < 0:
        raise ValueError(f"failures_per_gpu_day={failures_per_gpu_day!r} must be >= 0")
    size = CHECKPOINT_BYTES_PER_PARAM * n_params if checkpoint_bytes is None else checkpoint_bytes
    c = size / (write_GBps_per_gpu * 1e9 * n_gpus)
    lam = failures_per_gpu_day * n_gpus / SECONDS_PER_DAY          # per second
    if lam == 0:
        return Goodput(n_gpus, failures_per_gpu_day, restart_s, c, float("inf"), 0.0, 0.0)
    tau = (2 * c / lam) ** 0.5
    lost = c / tau + lam * (tau / 2 + restart_s)
    return Goodput(n_gpus, failures_per_gpu_day, restart_s, c, tau, lam * SECONDS_PER_DAY, lost)


def training_days_with_goodput(n_params: float, n_tokens: float, n_gpus: int, peak_tflops: float, mfu: float,
                               **goodput_kw) -> float:
    """``training_days`` stretched by the time lost to failures, restarts and checkpoints."""
    g = goodput(n_gpus, n_params, **goodput_kw).goodput
    if g <= 0:
        raise ValueError(f"goodput is 0 for {n_gpus} GPUs with {goodput_kw}: failures outpace progress")
    return training_days(n_params, n_tokens, n_gpus, peak_tflops, mfu) / g


# ---------------------------------------------------------------- published runs, checked out of sample

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
        return training_flops(self.n_params, self.n_tokens) / (self.total_gpu_hours * 3600 * peak * 1e12)


def load_runs(path: Path = RUNS_FILE) -> tuple[PublishedRun, ...]:
    """The published runs of ``published_runs.yaml``; every row needs a source URL and a known GPU."""
    known = {f.name for f in fields(PublishedRun)}
    out = []
    for r in yaml.safe_load(Path(path).read_text()):
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
class Job:
    name: str
    n_params: float
    n_tokens: float
    runs_per_year: float = 1.0


@dataclass(frozen=True)
class CapacityPlan:
    job: str
    runs_per_year: float
    flops_per_run: float
    gpu_hours_per_run: float
    gpu_hours_per_year: float
    share_of_total: float


def gpu_hours(total_flops: float, peak_tflops: float, mfu: float) -> float:
    """GPU-hours to deliver ``total_flops`` at ``mfu`` of ``peak_tflops``."""
    _positive(total_flops=total_flops, peak_tflops=peak_tflops)
    _fraction(mfu=mfu)
    return total_flops / (peak_tflops * 1e12 * mfu) / 3600


def capacity_plan(jobs, peak_tflops: float, mfu: float) -> list[CapacityPlan]:
    """GPU-hours per job for a year's list of ``Job``s (6·N·D each) at one assumed MFU."""
    rows = []
    for j in jobs:
        f = training_flops(j.n_params, j.n_tokens)
        h = gpu_hours(f, peak_tflops, mfu)
        rows.append((j, f, h))
    total = sum(h * j.runs_per_year for j, _, h in rows) or 1.0
    return [CapacityPlan(j.name, j.runs_per_year, f, h, h * j.runs_per_year, h * j.runs_per_year / total)
            for j, f, h in rows]


def cluster_gpus(gpu_hours_per_year: float, utilisation: float, goodput: float = 1.0,
                 hours_per_year: float = HOURS_PER_YEAR) -> float:
    """GPUs needed when a year holds ``hours_per_year`` per GPU, ``utilisation`` of them are scheduled with jobs,
    and ``goodput`` of scheduled time is useful (the rest: failures, restarts, checkpoints)."""
    _positive(gpu_hours_per_year=gpu_hours_per_year, hours_per_year=hours_per_year)
    _fraction(utilisation=utilisation, goodput=goodput)
    return gpu_hours_per_year / (hours_per_year * utilisation * goodput)


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
    good = {r.name: goodput(r.n_gpus, r.n_params_total or r.n_params, **goodput_kw).goodput if r.n_gpus else None
            for r in runs}
    fitted = [r for r in runs if r.total_gpu_hours]
    implied = {r.name: r.implied_mfu(peak[r.name][0]) for r in fitted}
    steady = {n: m / (good[n] or 1.0) for n, m in implied.items()}
    out = []
    for r in runs:
        others = [n for n in steady if n != r.name]
        m = mfu if mfu is not None else statistics.median(steady[n] for n in others)
        m_e2e = mfu if mfu is not None else statistics.median(implied[n] for n in others)
        flops, pk = training_flops(r.n_params, r.n_tokens), peak[r.name][0]
        g = good[r.name]
        pred_h = flops / (pk * 1e12 * m) / 3600 / (g or 1.0)
        pred_d = pred_h / (r.n_gpus * 24) if r.n_gpus else None
        pub_mfu = r.mfu_published or (r.tflops_published / pk if r.tflops_published else None)
        base = _err(flops / (pk * 1e12 * m_e2e) / 3600, r.total_gpu_hours)
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
