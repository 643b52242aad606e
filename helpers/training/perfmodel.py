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
* Capacity planning: GPU-hours of a year of jobs and the cluster size that runs them.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    place, ``helpers.training.memory.model_states`` (chapter 06 teaches it); this is its total."""
    from helpers.training import memory

    return memory.model_states(n_params, stage, n_dp, "mixed-adam").total_bytes


# ---------------------------------------------------------------- published runs and capacity planning

@dataclass(frozen=True)
class PublishedRun:
    name: str
    n_params: float
    n_tokens: float
    gpu: str                 # a helpers.core.specs name
    n_gpus: int | None
    gpu_hours: float         # as published, or derived from the published rate (``note`` says which)
    source: str
    note: str = ""

    def implied_mfu(self, peak_tflops: float) -> float:
        """6·N·D ÷ (GPU-hours × 3600 × peak): everything that was not useful work counts against it."""
        return training_flops(self.n_params, self.n_tokens) / (self.gpu_hours * 3600 * peak_tflops * 1e12)


_L1 = "https://arxiv.org/abs/2302.13971"   # LLaMA, Table 15 (GPU-hours) and §2.4 (380 tokens/s/GPU)
_L2 = "https://arxiv.org/abs/2307.09288"   # Llama 2, Table 2
PUBLISHED_RUNS = (
    PublishedRun("LLaMA-7B", 6.7e9, 1.0e12, "A100 SXM4 80GB", None, 82_432, _L1),
    PublishedRun("LLaMA-13B", 13.0e9, 1.0e12, "A100 SXM4 80GB", None, 135_168, _L1),
    PublishedRun("LLaMA-33B", 32.5e9, 1.4e12, "A100 SXM4 80GB", None, 530_432, _L1),
    PublishedRun("LLaMA-65B", 65.2e9, 1.4e12, "A100 SXM4 80GB", 2048, 1_022_362, _L1,
                 "380 tokens/s/GPU on 2048 GPUs: about 21 days for 1.4T tokens"),
    PublishedRun("Llama 2 7B", 7e9, 2.0e12, "A100 SXM4 80GB", None, 184_320, _L2),
    PublishedRun("Llama 2 13B", 13e9, 2.0e12, "A100 SXM4 80GB", None, 368_640, _L2),
    PublishedRun("Llama 2 34B", 34e9, 2.0e12, "A100 SXM4 80GB", None, 1_038_336, _L2),
    PublishedRun("Llama 2 70B", 70e9, 2.0e12, "A100 SXM4 80GB", None, 1_720_320, _L2),
)


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
    published_gpu_hours: float
    implied_mfu: float
    assumed_mfu: float
    predicted_gpu_hours: float
    error: float             # predicted ÷ published − 1


def check_published(runs=PUBLISHED_RUNS, peak_tflops: float = 312.0, mfu: float | None = None) -> list[RunCheck]:
    """Predict each published run's GPU-hours from 6·N·D at one MFU and compare. With ``mfu=None`` each run is
    predicted with the median MFU implied by the *other* runs (leave-one-out: a run never predicts itself)."""
    import statistics

    implied = [r.implied_mfu(peak_tflops) for r in runs]
    out = []
    for i, r in enumerate(runs):
        m = mfu if mfu is not None else statistics.median(implied[:i] + implied[i + 1:])
        pred = gpu_hours(training_flops(r.n_params, r.n_tokens), peak_tflops, m)
        out.append(RunCheck(r.name, r.gpu_hours, implied[i], m, pred, pred / r.gpu_hours - 1))
    return out
