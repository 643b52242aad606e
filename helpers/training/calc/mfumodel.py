"""MFU predicted from a run's configuration, checked on published runs it was not fitted on (chapter 28).

The step time of one GPU is built from the book's own models, as the Ultra-Scale Playbook's estimator and
Calculon (Isaev et al. 2023) do:

* GEMMs — QKV, output projection, FFN (two matrices, three with SwiGLU) and the LM head, each timed by the additive
  roofline FLOPs ÷ (η·MAMF) + bytes ÷ HBM bandwidth (MAMF: the measured maximum achievable matmul FLOP/s of the
  GPU, not its datasheet peak) (``helpers.formulas.roofline``): a small GEMM (small hidden ÷ TP,
  short micro-batch) is slower per FLOP because its operands weigh more against its FLOPs. Forward + two backward
  GEMMs; a full recomputation adds a forward.
* attention core: 4·T·s·h/TP FLOPs forward, ×3 for training. Where the source names its attention kernel
  (layout key ``attn_kernel``), the causal half of them runs at that kernel's published fraction of the datasheet
  peak (``ATTN_KERNEL_FRACTION``: FlashAttention-2 on A100 and H100, FlashAttention-3 on H100, FlashAttention in
  Triton); where it does not, at η·MAMF with ``CAUSAL_FLASH_SHARE`` = 1 (time as if the full s×s were computed at
  the GEMM rate), chosen among 0.5, 0.75 and 1 by looking at all runs — a structural choice, stated as such;
* memory-bound element-wise work (norms, activations, residuals, dropout): c_mem·h bytes per token per layer
  at HBM bandwidth, split over TP only with sequence parallelism; without flash attention also the s×s scores,
  softmax and dropout of every head (``SCORE_TRAFFIC`` passes over Korthikanti et al.'s 5·a·s²·b bytes);
* tensor-parallel all-reduces (4 per layer, 6 with full recomputation) on NVLink, context-parallel K/V gathers,
  pipeline sends, data-parallel gradient all-reduce or FSDP gathers on the scale-out link — ring α–β times
  (``helpers.formulas.comm``) at bw_eff × the nominal bandwidth;
* the pipeline bubble (p − 1)/v micro-batch times (Narayanan et al. 2021 §2.2; ``perfmodel.pipeline_bubble``);
* an Adam step (32 bytes per local parameter at HBM bandwidth).

Three constants are fitted (η, c_mem, bw_eff) on the runs marked ``fit: true`` in ``published_runs.yaml`` (about a
third, all A100); :func:`check` predicts the others, and :func:`leave_one_out` refits without each run in turn.

    runs = mfumodel.load_runs(); fit = mfumodel.fit([r for r in runs if r.fit])
    mfumodel.predict(runs[0], fit.params).error
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from helpers.core import specs
from helpers.formulas import comm

RUNS_FILE = Path(__file__).parents[1] / "data" / "published_runs.yaml"
ALPHA_S = 5e-6                      # per-hop collective latency (an assumption, not fitted)
OPT_BYTES_PER_PARAM = 32            # Adam: read fp32 weight, m, v, grad; write weight, m, v, bf16 copy
# Maximum achievable matmul FLOP/s (bf16, measured by mamf-finder): the GEMM roof instead of the datasheet peak.
# stas00/ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table".
MAMF_TFLOPS = {"A100 SXM4 80GB": 267.9, "A100 SXM4 40GB": 267.9, "H100 SXM": 792.1, "GH200 480GB": 821.0}
# Accelerators that are not in helpers/core/data/gpu_specs.yaml: peak, HBM and the per-chip collective bandwidth.
# TPU v4 (Google Cloud docs, "TPU v4", system architecture table): 275 TFLOP/s bf16, HBM2 1200 GB/s, all-reduce
# bandwidth 1.1 PB/s per 4096-chip pod, i.e. 1.1e15 / 4096 ≈ 269 GB/s per chip (used for TP and DP collectives).
ACCELERATORS = {"TPU v4": {"peak_tflops": 275.0, "hbm_GBps": 1200.0, "link_GBps": 1.1e6 / 4096,
                           "source": "https://cloud.google.com/tpu/docs/v4"}}
CAUSAL_FLASH_SHARE = 1.0            # see the module note: chosen among 0.5, 0.75, 1 on all runs (a structural choice)
# Attention kernels named by a run's source (layout key attn_kernel): forward + backward rate over the causal half of
# the attention FLOPs, as a fraction of the datasheet dense peak of the GPU's architecture.
#   fa2 on Ampere 0.615: the middle of "50-73% of the theoretical maximum FLOPs/s on A100" (Dao 2023,
#     FlashAttention-2, arXiv:2307.08691, abstract; §4.1: "up to 230 TFLOPs/s, 73%" forward).
#   fa2 on Hopper 0.35: "FlashAttention-2 achieving only 35% utilization on H100" (Shah et al. 2024,
#     FlashAttention-3, arXiv:2407.08608, abstract); fa3 on Hopper 0.85: BF16 "up to 840 TFLOPs/s (85% utilization)"
#     (the published version's abstract; preprint v1: FP16 740 TFLOPs/s, 75 %).
#   triton_flash: FlashAttention-2's rate ÷ 1.9, the middle of "1.3-2.5× faster than FlashAttention in Triton"
#     (Dao 2023, §4). On Hopper the same ratio is assumed: both kernels issue Ampere-era mma instructions, which is
#     why FlashAttention-2 reaches 35 % there (FlashAttention-3, §1).
ATTN_KERNEL_FRACTION = {("fa2", "Ampere"): 0.615, ("fa2", "Hopper"): 0.35, ("fa3", "Hopper"): 0.85}
TRITON_VS_FA2 = 1.9
# Without flash attention the scores, softmax and dropout tensors of every head live in HBM: Korthikanti et al. 2022
# §4.1 count 5·a·s²·b bytes of them stored per layer. Written in the forward and read in the backward, with gradients
# of the same size written and read again: SCORE_TRAFFIC = 4 passes over those bytes (a structural count, not fitted).
SCORE_TRAFFIC = 4
GRID = {"eta": np.linspace(0.40, 1.00, 61), "c_mem": np.arange(0.0, 241.0, 4.0),
        "bw_eff": np.linspace(0.30, 1.00, 15)}


@dataclass(frozen=True)
class LayoutRun:
    name: str
    gpu: str
    n_gpus: int
    n_params: float
    layout: dict
    published: float               # MFU (fraction) or TFLOP/s per GPU, as the source counts it
    metric: str                    # "mfu" | "tflops"
    source: str
    says: str
    fit: bool = False
    mamf_tflops: float | None = None     # a measured GEMM roof for this run's GPU (else MAMF_TFLOPS, else the peak)

    def hardware(self) -> tuple[float, float, float, float]:
        """(GEMM roof FLOP/s, datasheet peak FLOP/s, HBM B/s, scale-up link GB/s per direction)."""
        if self.gpu in ACCELERATORS:
            a = ACCELERATORS[self.gpu]
            return a["peak_tflops"] * 1e12, a["peak_tflops"] * 1e12, a["hbm_GBps"] * 1e9, a["link_GBps"]
        spec = specs.lookup(self.gpu, warn=False)
        peak = spec.training_peak()[0]
        return ((self.mamf_tflops or MAMF_TFLOPS.get(spec.name, peak)) * 1e12, peak * 1e12, spec.hbm_GBps * 1e9,
                (spec.nvlink_GBps or 64) / 2)


@dataclass(frozen=True)
class Params:
    eta: float                     # GEMM/attention efficiency ceiling (fraction of the dense peak)
    c_mem: float                   # element-wise HBM traffic per token per layer, in units of hidden × 2 bytes
    bw_eff: float                  # achieved ÷ nominal link bandwidth for collectives


@dataclass(frozen=True)
class Prediction:
    name: str
    gpu: str
    n_gpus: int
    published: float
    predicted: float
    error: float                   # predicted ÷ published − 1
    step_time_s: float
    bubble_share: float            # pipeline bubble ÷ step time
    comm_share: float              # exposed communication ÷ step time
    fitted_on_it: bool


@dataclass(frozen=True)
class Fit:
    params: Params
    fitted_on: tuple[str, ...]
    loss: float                    # mean |log(predicted ÷ published)| on the fit runs
    extra: dict = field(default_factory=dict)


def load_runs(path: Path = RUNS_FILE) -> tuple[LayoutRun, ...]:
    """The published runs that carry a ``layout`` (see the comment above them in the YAML)."""
    out = []
    for r in yaml.safe_load(Path(path).read_text()):
        if "layout" not in r:
            continue
        lay = r["layout"]
        n = lay["tp"] * lay["pp"] * lay["dp"] * lay.get("cp", 1)
        if n != r["n_gpus"]:
            raise ValueError(f"{r['name']}: tp·pp·dp·cp = {n} but n_gpus = {r['n_gpus']}; fix the layout")
        metric = "mfu" if r.get("mfu_published") else "tflops"
        out.append(LayoutRun(r["name"], r["gpu"], r["n_gpus"], float(r["n_params"]), lay,
                             float(r.get("mfu_published") or r["tflops_published"]), metric, r["source"], r["says"],
                             bool(r.get("fit", False))))
    return tuple(out)


def flops_per_token(run: LayoutRun) -> float:
    """FLOPs per token the way the run's source counts them (``layout.convention``)."""
    L = run.layout
    l, h, s, V = L["n_layers"], L["hidden"], L["seq_len"], L["vocab"]
    if L["convention"] == "6N+attn":
        return 6 * run.n_params + 12 * l * L.get("q_hidden", h) * s
    if L["convention"] == "megatron_hfu":      # Narayanan et al. 2021 eq. 3 per token (96 with recomputation)
        return 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    raise ValueError(f"{run.name}: convention {L['convention']!r} unknown; use '6N+attn' or 'megatron_hfu'")


def attention_rate(run: LayoutRun) -> float | None:
    """FLOP/s of the attention kernel the run's source names (``layout.attn_kernel``), None when none is named."""
    kern = run.layout.get("attn_kernel")
    if not kern:
        return None
    spec = specs.lookup(run.gpu, warn=False)
    arch = spec.architecture if spec else run.gpu
    base = "fa2" if kern == "triton_flash" else kern
    if not run.layout.get("flash") or (base, arch) not in ATTN_KERNEL_FRACTION:
        known = sorted({k for k, _ in ATTN_KERNEL_FRACTION} | {"triton_flash"})
        raise ValueError(f"{run.name}: attn_kernel {kern!r} on {arch} has no published rate (known: {known} on "
                         f"{sorted({a for _, a in ATTN_KERNEL_FRACTION})}, with flash: true); drop the key to time "
                         "attention at the GEMM rate")
    frac = ATTN_KERNEL_FRACTION[(base, arch)] / (TRITON_VS_FA2 if kern == "triton_flash" else 1.0)
    return frac * run.hardware()[1]


def _gemm(m, k, n, peak, hbm, eta):
    """Additive roofline of one bf16 GEMM (m×k)·(k×n): FLOPs ÷ (η·peak) + bytes ÷ bandwidth."""
    return 2 * m * k * n / (peak * eta) + 2 * (m * k + k * n + m * n) / hbm


def _ring(size, p, bw, e):
    return comm.ring_bw_s(size, p, bw) / e + 2 * (p - 1) * ALPHA_S if p > 1 else 0.0


def _gather(size, p, bw, e):
    return (p - 1) / p * size / (bw * 1e9) / e + (p - 1) * ALPHA_S if p > 1 else 0.0


def step_time(run: LayoutRun, eta, c_mem, bw_eff):
    """(step time, bubble time, exposed communication time) in seconds; the constants may be numpy arrays."""
    L = run.layout
    peak, _, hbm, nvl = run.hardware()                              # peak: the GEMM roof (MAMF where measured)
    ib = L["ib_GBps_per_gpu"]
    tp, pp, dp, cp, v = L["tp"], L["pp"], L["dp"], L.get("cp", 1), L.get("vpp", 1)
    l, h, s, V = L["n_layers"], L["hidden"], L["seq_len"], L["vocab"]
    kv, ffn, glu = L.get("kv_hidden", h), L.get("ffn", 4 * h), L.get("glu", False)
    q = L.get("q_hidden", h)                                        # heads × head size (PaLM: ≠ hidden)
    T = L["micro_batch"] * s / cp                                   # tokens per micro-batch on this GPU
    m = L["global_batch"] // (dp * L["micro_batch"])                # micro-batches per step
    rec = {"none": 1.0, "selective": 1.0, "full": 4 / 3}[L["recompute"]]
    gem = (_gemm(T, h, (q + 2 * kv) / tp, peak, hbm, eta) + _gemm(T, q / tp, h, peak, hbm, eta)
           + _gemm(T, h, (2 if glu else 1) * ffn / tp, peak, hbm, eta) + _gemm(T, ffn / tp, h, peak, hbm, eta))
    rate = attention_rate(run)
    if rate:                                                        # a named kernel: the causal half at its rate
        attn = 2 * T * s * q / tp / rate
    else:
        attn = 4 * T * s * q / tp * (CAUSAL_FLASH_SHARE if L.get("flash") else 1.0) / (peak * eta)
    if L["recompute"] == "selective":
        attn = attn * 4 / 3
    mem = c_mem * T * h * 2 / (tp if L.get("sequence_parallel") else 1) / hbm
    if not L.get("flash"):                                          # unfused attention: the s×s scores in HBM
        if "heads" not in L:
            raise ValueError(f"{run.name}: attention without flash needs layout.heads (the s×s scores go to HBM)")
        mem = mem + SCORE_TRAFFIC * 5 * L["heads"] / tp * s * s * L["micro_batch"] / hbm * (4 / 3 if L["recompute"]
                                                                                            == "selective" else 1)
    tp_comm = (6 if L["recompute"] == "full" else 4) * _ring(T * h * 2, tp, nvl, bw_eff) if tp > 1 else 0.0
    cp_comm = 2 * _gather(2 * T * cp * kv * 2, cp, ib, bw_eff) if cp > 1 else 0.0
    layer = 3 * (gem + attn) * rec + mem * rec + tp_comm + cp_comm
    head = 3 * _gemm(T, h, V / tp, peak, hbm, eta) / pp
    p2p = 2 * T * h * 2 / (ib * 1e9) / bw_eff if pp > 1 else 0.0
    t_mb = layer * l / pp + head + p2p
    comm_mb = (tp_comm + cp_comm) * l / pp + p2p
    n_local = run.n_params / (tp * pp)
    scale_out = ib if tp * pp * cp * dp > L.get("scale_up_domain", 8) else nvl
    exposed_dp = 0.0
    if dp > 1 and L["dp_mode"] == "fsdp":                           # gather twice, reduce-scatter once, per micro-batch
        fs = 3 * _gather(2 * n_local, dp, scale_out, bw_eff)
        exposed_dp = m * np.maximum(0.0, fs - t_mb)
    elif dp > 1:
        ar = _ring(2 * n_local, dp, scale_out, bw_eff)
        exposed_dp = np.maximum(0.0, ar - 2 / 3 * t_mb) if L["dp_mode"] == "allreduce_overlap" else ar
    bubble = (pp - 1) / v * t_mb
    opt = OPT_BYTES_PER_PARAM * n_local / (dp if L["dp_mode"] in ("fsdp", "allreduce_overlap") else 1) / hbm
    total = m * t_mb + bubble + exposed_dp + opt
    return total, bubble, m * comm_mb + exposed_dp


def predicted_metric(run: LayoutRun, t_step):
    """The run's published metric (MFU or TFLOP/s per GPU) at step time ``t_step``."""
    rate = flops_per_token(run) * run.layout["global_batch"] * run.layout["seq_len"] / (run.n_gpus * t_step)
    if run.metric == "tflops":
        return rate / 1e12
    return rate / run.hardware()[1]


def predict(run: LayoutRun, params: Params, fitted_on=()) -> Prediction:
    t, bub, cm = step_time(run, params.eta, params.c_mem, params.bw_eff)
    pred = float(predicted_metric(run, t))
    return Prediction(run.name, run.gpu, run.n_gpus, run.published, pred, pred / run.published - 1, float(t),
                      float(bub / t), float(cm / t), run.name in fitted_on)


def _log_errors(runs) -> np.ndarray:
    """|log(predicted ÷ published)| of each run over the whole constant grid: shape (runs, η, c_mem, bw_eff)."""
    e, c, b = np.meshgrid(GRID["eta"], GRID["c_mem"], GRID["bw_eff"], indexing="ij")
    return np.stack([np.abs(np.log(predicted_metric(r, step_time(r, e, c, b)[0]) / r.published)) for r in runs])


def fit(runs, _errors: np.ndarray | None = None) -> Fit:
    """The grid point of (η, c_mem, bw_eff) with the least mean |log error| over ``runs``."""
    runs = list(runs)
    if not runs:
        raise ValueError("fit needs at least one run with a layout; mark some with fit: true")
    errs = _log_errors(runs) if _errors is None else _errors
    loss = errs.mean(axis=0)
    i = np.unravel_index(int(np.argmin(loss)), loss.shape)
    p = Params(float(GRID["eta"][i[0]]), float(GRID["c_mem"][i[1]]), float(GRID["bw_eff"][i[2]]))
    return Fit(p, tuple(r.name for r in runs), float(loss[i]))


def check(runs=None, fit_on=None) -> tuple[Fit, list[Prediction]]:
    """Fit on ``fit_on`` (default: the runs marked ``fit``) and predict every run; out of sample = the others."""
    runs = load_runs() if runs is None else tuple(runs)
    train = [r for r in runs if r.fit] if fit_on is None else list(fit_on)
    f = fit(train)
    return f, [predict(r, f.params, f.fitted_on) for r in runs]


def leave_one_out(runs=None) -> list[Prediction]:
    """Each run predicted with the constants fitted on all the others (the grid is evaluated once)."""
    runs = load_runs() if runs is None else tuple(runs)
    errs = _log_errors(runs)
    out = []
    for i, r in enumerate(runs):
        others = [x for j, x in enumerate(runs) if j != i]
        f = fit(others, np.delete(errs, i, axis=0))
        out.append(predict(r, f.params))
    return out


def summary(preds, out_of_sample_only: bool = True) -> dict:
    """n, median and worst |error| (fractions) and the worst run, over the predictions not fitted on."""
    rows = [p for p in preds if not (out_of_sample_only and p.fitted_on_it)]
    errs = [(abs(p.error), p.name) for p in rows]
    worst = max(errs)
    return {"n": len(errs), "median": statistics.median(e for e, _ in errs), "worst": worst[0],
            "worst_run": worst[1], "within_10pct": sum(e <= 0.10 for e, _ in errs)}
