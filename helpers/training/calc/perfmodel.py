"""Performance models of LLM training as pure functions (chapter 28; chapter 01 sizes a cluster with them).

Each function is one published formula, with the paper it comes from; all rates are per GPU and dense.
Units in the names: ``*_tflops`` are 10^12 FLOP/s, ``*_bytes`` bytes, ``days`` 86 400 s. The formulas other wings
share — 6·N·D, FLOPs per token, MFU (``helpers.formulas.flops``), Young's interval
(``helpers.formulas.checkpointing``) — live in ``helpers.formulas``; the published runs the models are checked
against in ``helpers.training.calc.published``.

* Time: GPUs, days and GPU-hours of a 6·N·D run at a given MFU (Kaplan et al. 2020, arXiv:2001.08361 §2.1).
* Megatron-LM (Narayanan et al. 2021, arXiv:2104.04473): parameters (eq. 2), FLOPs per iteration (eq. 3),
  end-to-end time 8·T·P / (n·X) (eq. 4, with activation recomputation; 6 without).
* Pipeline bubble (same paper, §2.2): (p − 1)/m of the ideal time; interleaved (p − 1)/(v·m).
* ZeRO model-state memory per GPU (Rajbhandari et al. 2020, arXiv:1910.02054 §5): 16Ψ bytes with mixed-precision
  Adam, partitioned over N_d data-parallel ranks by stage 1, 2, 3.
* Goodput: the share of wall-clock time that trains, given failures per GPU-day, restart time and checkpoint
  writes (Young 1974's optimal interval; failure rate from Llama 3, arXiv:2407.21783 Table 5).
* Capacity planning: GPU-hours of a year of jobs and the cluster size that runs them.
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.formulas import checkpointing, flops

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

def gpus_needed(total_flops: float, days: float, peak_tflops: float, mfu: float) -> float:
    """GPUs that deliver ``total_flops`` in ``days`` at ``mfu`` of a ``peak_tflops`` peak (fractional)."""
    _positive(total_flops=total_flops, days=days, peak_tflops=peak_tflops)
    _fraction(mfu=mfu)
    return total_flops / (days * SECONDS_PER_DAY * peak_tflops * 1e12 * mfu)


def training_days(n_params: float, n_tokens: float, n_gpus: float, peak_tflops: float, mfu: float) -> float:
    """Wall-clock days of a 6·N·D training run on ``n_gpus`` at ``mfu``."""
    _positive(n_gpus=n_gpus, peak_tflops=peak_tflops)
    _fraction(mfu=mfu)
    return flops.training_flops(n_params, n_tokens) / (n_gpus * peak_tflops * 1e12 * mfu) / SECONDS_PER_DAY


def days_from_throughput(n_tokens: float, tokens_per_s_per_gpu: float, n_gpus: float) -> float:
    """Days to process ``n_tokens`` at a measured per-GPU token rate (what papers report)."""
    _positive(n_tokens=n_tokens, tokens_per_s_per_gpu=tokens_per_s_per_gpu, n_gpus=n_gpus)
    return n_tokens / (tokens_per_s_per_gpu * n_gpus) / SECONDS_PER_DAY


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
    The interval is Young's optimum τ = √(2·C/λ) and the lost fraction C/τ + λ·(τ/2 + R)
    (``helpers.formulas.checkpointing.young`` with M = 1/λ, and ``young_waste_fraction``)."""
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
    tau = checkpointing.young(c, 1 / lam)
    lost = checkpointing.young_waste_fraction(tau, c, lam, restart_s)
    return Goodput(n_gpus, failures_per_gpu_day, restart_s, c, tau, lam * SECONDS_PER_DAY, lost)


def training_days_with_goodput(n_params: float, n_tokens: float, n_gpus: int, peak_tflops: float, mfu: float,
                               **goodput_kw) -> float:
    """``training_days`` stretched by the time lost to failures, restarts and checkpoints."""
    g = goodput(n_gpus, n_params, **goodput_kw).goodput
    if g <= 0:
        raise ValueError(f"goodput is 0 for {n_gpus} GPUs with {goodput_kw}: failures outpace progress")
    return training_days(n_params, n_tokens, n_gpus, peak_tflops, mfu) / g


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
        f = flops.training_flops(j.n_params, j.n_tokens)
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
