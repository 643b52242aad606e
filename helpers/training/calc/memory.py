"""Training-memory calculator: weights, gradients, optimizer state and activations per GPU (chapter 09;
used by chapter 06's ZeRO comparison and chapter 07's planner).

Model states (ZeRO, Rajbhandari et al., arXiv 1910.02054 §3 and §5): mixed-precision Adam keeps 2 bytes of
fp16/bf16 weights, 2 of gradients and K = 12 of optimizer state (fp32 master weights, momentum, variance)
per parameter — 16Ψ in all. With data-parallel degree N_d, ZeRO stage 1 shards the optimizer state
(4Ψ + 12Ψ/N_d), stage 2 also the gradients (2Ψ + 14Ψ/N_d), stage 3 also the weights (16Ψ/N_d).

Activations per transformer layer (Korthikanti et al., arXiv 2205.05198, Table 2), with s = sequence length,
b = micro-batch, h = hidden size, a = heads, t = tensor-parallel size, 2-byte activations and 1-byte dropout
masks:  none sbh(34 + 5as/h) · TP sbh(10 + 24/t + 5as/(ht)) · TP+SP sbh(34 + 5as/h)/t ·
selective recompute 34sbh/t (with SP) · full recompute 2sbh (÷t with SP).

    python -m helpers memory --params 7.5e9 --dp 64 --json     # the ZeRO paper's example
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli

RECOMPUTE = ("none", "selective", "full")


@dataclass(frozen=True)
class BytesPerParam:
    weights: float
    grads: float
    optimizer: float            # ZeRO's K


PRECISIONS = {
    "mixed-adam": BytesPerParam(2, 2, 12),   # fp16/bf16 weights+grads; fp32 master, momentum, variance
    "fp32-adam": BytesPerParam(4, 4, 8),     # fp32 weights+grads; fp32 momentum, variance (no master copy)
}


@dataclass(frozen=True)
class ModelShape:
    """A GPT-style decoder: the numbers the formulas need."""
    n_layers: int
    hidden: int
    n_heads: int
    vocab: int = 51200
    seq_len: int = 2048

    def __post_init__(self):
        if self.hidden % self.n_heads:
            raise ValueError(f"hidden={self.hidden} is not divisible by n_heads={self.n_heads}")

    @property
    def n_params(self) -> float:
        """12 L h² (1 + 13/(12h) + (V + s)/(12 L h)) — Narayanan et al., arXiv 2104.04473 §5.1."""
        L, h = self.n_layers, self.hidden
        return 12 * L * h * h * (1 + 13 / (12 * h) + (self.vocab + self.seq_len) / (12 * L * h))


@dataclass(frozen=True)
class ModelStates:
    n_params: float             # parameters this GPU's model-parallel group holds (Ψ)
    zero_stage: int
    dp: int
    precision: str
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.grads_bytes + self.optimizer_bytes


def model_states(n_params: float, zero_stage: int = 0, dp: int = 1, precision: str = "mixed-adam") -> ModelStates:
    """Per-GPU bytes of weights, gradients and optimizer state for ZeRO ``zero_stage`` over ``dp`` ranks."""
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage={zero_stage}: ZeRO stages are 0 (none), 1, 2, 3")
    if dp < 1 or not 0 < n_params < float("inf"):          # NaN fails the comparison too
        raise ValueError(f"dp={dp}, n_params={n_params}: need dp >= 1 and a positive, finite parameter count")
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r}: use one of {sorted(PRECISIONS)}")
    b = PRECISIONS[precision]
    w = b.weights * n_params / (dp if zero_stage >= 3 else 1)
    g = b.grads * n_params / (dp if zero_stage >= 2 else 1)
    o = b.optimizer * n_params / (dp if zero_stage >= 1 else 1)
    return ModelStates(n_params, zero_stage, dp, precision, w, g, o)


def activation_bytes_per_layer(seq_len: int, micro_batch: int, hidden: int, n_heads: int, tp: int = 1,
                               sp: bool = False, recompute: str = "none") -> float:
    """Bytes one transformer layer stores for backward (Korthikanti et al., Table 2; 16-bit activations)."""
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute={recompute!r}: use one of {RECOMPUTE}")
    if tp < 1 or hidden % tp or n_heads % tp:
        raise ValueError(f"tp={tp} must divide hidden={hidden} and n_heads={n_heads}")
    s, b, h, a, t = seq_len, micro_batch, hidden, n_heads, tp
    sbh = s * b * h
    if recompute == "full":
        return 2 * sbh / (t if sp else 1)
    attn_scores = 0.0 if recompute == "selective" else 5 * a * s / h     # the 5as²b term, divided by sbh
    if sp or t == 1:
        return sbh * (34 + attn_scores) / t
    return sbh * (10 + 24 / t + attn_scores / t)


@dataclass(frozen=True)
class GPUMemory:
    """One GPU's share of a training job: what sits in memory at the peak of the 1F1B schedule."""
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.grads_bytes + self.optimizer_bytes + self.activations_bytes


def per_gpu(model: ModelShape, micro_batch: int = 1, dp: int = 1, tp: int = 1, pp: int = 1, zero_stage: int = 0,
            recompute: str = "none", sp: bool | None = None, n_micro: int | None = None,
            precision: str = "mixed-adam") -> GPUMemory:
    """Memory of the first pipeline stage (the fullest): Ψ/(tp·pp) parameters under ZeRO over ``dp``, and
    L/pp layers of activations for min(pp, n_micro) micro-batches in flight (1F1B). Sequence parallelism
    is on whenever tp > 1 unless ``sp=False``. With full recompute one layer's activations are rebuilt at a
    time, so one layer's full set is added as working memory."""
    if model.n_layers % pp:
        raise ValueError(f"pp={pp} does not divide n_layers={model.n_layers}")
    sp = tp > 1 if sp is None else sp
    st = model_states(model.n_params / (tp * pp), zero_stage, dp, precision)
    in_flight = min(pp, n_micro or pp)
    layer = activation_bytes_per_layer(model.seq_len, micro_batch, model.hidden, model.n_heads, tp, sp, recompute)
    act = layer * (model.n_layers // pp) * in_flight
    if recompute == "full":
        act += activation_bytes_per_layer(model.seq_len, micro_batch, model.hidden, model.n_heads, tp, sp, "none")
    return GPUMemory(st.weights_bytes, st.grads_bytes, st.optimizer_bytes, act)


def activation_terms(seq_len: int, micro_batch: int, hidden: int, n_heads: int) -> list[dict]:
    """The tensors behind sbh(34 + 5as/h), one row each (Korthikanti et al. §4.1), with their bytes."""
    s, b, h, a = seq_len, micro_batch, hidden, n_heads
    sbh, as2b = s * b * h, a * s * s * b
    rows = [("attention", "LayerNorm 1 input", 2 * sbh), ("attention", "QKV projection input", 2 * sbh),
            ("attention", "Q and K (for QKᵀ)", 4 * sbh), ("attention", "softmax output", 2 * as2b),
            ("attention", "dropout mask on scores (1 byte)", as2b),
            ("attention", "dropped-out scores (for ·V)", 2 * as2b), ("attention", "V", 2 * sbh),
            ("attention", "output projection input", 2 * sbh), ("attention", "dropout mask (1 byte)", sbh),
            ("MLP", "LayerNorm 2 input", 2 * sbh), ("MLP", "first linear input", 2 * sbh),
            ("MLP", "GELU input (4h)", 8 * sbh), ("MLP", "second linear input (4h)", 8 * sbh),
            ("MLP", "dropout mask (1 byte)", sbh)]
    return [{"part": p, "tensor": t, "bytes": n} for p, t, n in rows]


# ------------------------------------------------------------------ the calculator, as a table and a widget

COMPONENTS = ("weights", "grads", "optimizer", "activations")


def sweep(model: ModelShape, dps=(1, 8, 64), zero_stages=(0, 1, 2, 3), recomputes=RECOMPUTE, **kw) -> list[dict]:
    """One row per (dp, ZeRO stage, recompute) with each component in GB (10⁹ bytes)."""
    rows = []
    for dp in dps:
        for z in zero_stages:
            for r in recomputes:
                m = per_gpu(model, dp=dp, zero_stage=z, recompute=r, **kw)
                rows.append({"dp": dp, "zero_stage": z, "recompute": r,
                             **{f"{c}_GB": getattr(m, f"{c}_bytes") / 1e9 for c in COMPONENTS},
                             "total_GB": m.total_bytes / 1e9})
    return rows


def widget(model: ModelShape, gpu_memory_GB: float):
    """The same calculator as live ipywidgets controls (needs a running kernel; the book shows
    ``helpers.figures.training.memory_figure``).
    The result is an HTML widget updated in place (no ``Output`` widget: it renders the same in every front end)."""
    import ipywidgets as w  # optional: only a live Jupyter session can use widgets

    from helpers.core import results

    out = w.HTML()
    dp = w.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64, 128], value=8, description="dp")
    tp = w.Dropdown(options=[1, 2, 4, 8], value=1, description="tp")
    zero = w.Dropdown(options=[0, 1, 2, 3], value=0, description="ZeRO")
    rec = w.Dropdown(options=list(RECOMPUTE), value="none", description="recompute")
    mb = w.IntSlider(value=1, min=1, max=16, description="micro-batch")

    def redraw(*_):
        m = per_gpu(model, micro_batch=mb.value, dp=dp.value, tp=tp.value, zero_stage=zero.value,
                    recompute=rec.value)
        row = {**{f"{c}_GB": round(getattr(m, f"{c}_bytes") / 1e9, 2) for c in COMPONENTS},
               "total_GB": round(m.total_bytes / 1e9, 2), "fits": m.total_bytes / 1e9 <= gpu_memory_GB}
        out.value = results.table([row]).to_html(index=False)

    for c in (dp, tp, zero, rec, mb):
        c.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([dp, mb]), w.HBox([tp, zero, rec]), out])


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results

    ap = argparse.ArgumentParser(prog="python -m helpers memory", description=__doc__.split("\n")[0])
    ap.add_argument("--params", type=cli.bounded_float(1.0, 1e15), default=7.5e9,
                    help="parameter count Ψ, 1..1e15 (default: ZeRO's 7.5B)")
    ap.add_argument("--dp", type=cli.bounded_int(1, 10_000_000), default=64, help="data-parallel degree N_d")
    ap.add_argument("--precision", default="mixed-adam", choices=sorted(PRECISIONS))
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = [{"zero_stage": z, "dp": a.dp, **{k: v / 1e9 for k, v in (
        ("weights_GB", s.weights_bytes), ("grads_GB", s.grads_bytes), ("optimizer_GB", s.optimizer_bytes),
        ("total_GB", s.total_bytes))}} for z in range(4) for s in [model_states(a.params, z, a.dp, a.precision)]]
    results.emit(recs, "memory-model-states", a)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
