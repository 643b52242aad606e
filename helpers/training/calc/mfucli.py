"""Predict a training run's MFU from its layout, or print the MFU model's out-of-sample check (chapter 28).

The model is :mod:`helpers.training.calc.mfumodel`: three constants fitted on the published runs marked ``fit`` (a
third, all A100), everything else predicted. ``--check`` prints which runs it was fitted on, every run's
prediction against its published figure, and the median and worst error out of sample (also per GPU generation,
and leave-one-out with ``--loo``). Without ``--check`` it predicts one run: a published one by name (``--run``),
changed by any layout flag, or a layout given entirely by flags.

    python -m helpers mfumodel --check
    python -m helpers mfumodel --run "Llama 3 405B 16384 GPUs seq 131072" --pp 8 --dp 16
    python -m helpers mfumodel --gpu "H100 SXM" --params 8e9 --layers 32 --hidden 4096 --ffn 14336 --glu \\
        --kv-hidden 1024 --vocab 128256 --seq 8192 --dp 8 --micro-batch 1 --global-batch 64 --json
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, results, specs
from helpers.training.calc import mfumodel as M


@dataclass(frozen=True)
class MfuPrediction:
    name: str
    gpu: str
    n_gpus: int
    mfu_predicted: float           # model FLOPs ÷ (step time × datasheet peak), as the run's convention counts them
    tflops_per_gpu: float
    step_time_s: float
    tokens_per_s_per_gpu: float
    bubble_share: float            # pipeline bubble ÷ step time
    comm_share: float              # exposed communication ÷ step time
    published: float | None        # the source's figure when --run names an unchanged published run
    published_metric: str          # "mfu" | "tflops" | ""


def _gpus() -> list[str]:
    ok = []
    for s in specs.all_specs():
        try:
            if s.training_peak()[0] and s.hbm_GBps:
                ok.append(s.name)
        except (TypeError, ValueError, KeyError):
            continue
    return ok + list(M.ACCELERATORS)


LAYOUT_FLAGS = {  # flag dest → (layout key, type, help)
    "layers": ("n_layers", cli.bounded_int(1, 10_000), "transformer layers"),
    "hidden": ("hidden", cli.bounded_int(64, 1 << 20), "hidden size"),
    "ffn": ("ffn", cli.bounded_int(64, 1 << 22), "FFN inner size (default 4 × hidden)"),
    "kv_hidden": ("kv_hidden", cli.bounded_int(16, 1 << 20), "K/V width (GQA: kv heads × head size)"),
    "vocab": ("vocab", cli.bounded_int(2, 1 << 22), "vocabulary size"),
    "seq": ("seq_len", cli.bounded_int(16, 1 << 22), "sequence length"),
    "tp": ("tp", cli.bounded_int(1, 1 << 12), "tensor parallel"),
    "pp": ("pp", cli.bounded_int(1, 1 << 12), "pipeline parallel"),
    "dp": ("dp", cli.bounded_int(1, 1 << 20), "data parallel"),
    "cp": ("cp", cli.bounded_int(1, 1 << 12), "context parallel"),
    "vpp": ("vpp", cli.bounded_int(1, 1 << 10), "virtual pipeline stages per GPU"),
    "micro_batch": ("micro_batch", cli.bounded_int(1, 1 << 16), "sequences per micro-batch"),
    "global_batch": ("global_batch", cli.bounded_int(1, 1 << 26), "sequences per step"),
    "ib": ("ib_GBps_per_gpu", cli.bounded_float(0.1, 10_000.0), "scale-out GB/s per GPU per direction"),
    "recompute": ("recompute", None, "activation recomputation"),
    "dp_mode": ("dp_mode", None, "how gradients are synchronised"),
    "attn_kernel": ("attn_kernel", None, "attention kernel (default: timed at the GEMM rate)"),
}
CHOICES = {"recompute": ("none", "selective", "full"), "dp_mode": ("fsdp", "allreduce", "allreduce_overlap"),
           "attn_kernel": ("fa2", "fa3", "triton_flash")}
SWITCHES = {"glu": "glu", "flash": "flash", "sequence_parallel": "sequence_parallel"}


def build_run(a: argparse.Namespace) -> tuple[M.LayoutRun, bool]:
    """The run to predict and whether it is a published run left unchanged."""
    base = {r.name: r for r in M.load_runs()}.get(a.run) if a.run else None
    lay = dict(base.layout) if base else {"cp": 1, "recompute": "none", "dp_mode": "fsdp", "flash": True,
                                          "ib_GBps_per_gpu": 50.0, "convention": "6N+attn", "tp": 1, "pp": 1}
    changed = False
    for dest, (key, _, _) in LAYOUT_FLAGS.items():
        if getattr(a, dest) is not None:
            changed |= lay.get(key) != getattr(a, dest)
            lay[key] = getattr(a, dest)
    for dest, key in SWITCHES.items():
        if getattr(a, dest):
            changed |= not lay.get(key)
            lay[key] = True
    gpu = a.gpu or (base.gpu if base else None)
    n_params = a.params or (base.n_params if base else None)
    missing = [f"--{k.replace('_', '-')}" for k, v in (("gpu", gpu), ("params", n_params)) if v is None] + \
        [f"--{d.replace('_', '-')}" for d, (k, _, _) in LAYOUT_FLAGS.items()
         if k in ("n_layers", "hidden", "vocab", "seq_len", "dp", "micro_batch", "global_batch") and k not in lay]
    if missing:
        raise ValueError(f"a layout needs {', '.join(missing)} (or --run NAME to start from a published run)")
    n = lay["tp"] * lay["pp"] * lay["dp"] * lay.get("cp", 1)
    if lay["global_batch"] % (lay["dp"] * lay["micro_batch"]):
        raise ValueError(f"--global-batch {lay['global_batch']} is not a multiple of dp × micro-batch = "
                         f"{lay['dp'] * lay['micro_batch']}; change one of them")
    changed |= bool(base) and (gpu != base.gpu or n_params != base.n_params)
    name = (base.name + (" (changed)" if changed else "")) if base else f"{n_params / 1e9:g}B on {n} × {gpu}"
    run = M.LayoutRun(name, gpu, n, float(n_params), lay, base.published if base else 1.0,
                      base.metric if base else "mfu", base.source if base else "", base.says if base else "")
    return run, bool(base) and not changed


def predict(run: M.LayoutRun, params: M.Params, published: bool) -> MfuPrediction:
    t, bub, cm = M.step_time(run, params.eta, params.c_mem, params.bw_eff)
    t = float(t)
    tokens = run.layout["global_batch"] * run.layout["seq_len"] / run.n_gpus / t
    flops = M.flops_per_token(run) * tokens
    return MfuPrediction(run.name, run.gpu, run.n_gpus, flops / run.hardware()[1], flops / 1e12, t, tokens,
                         float(bub) / t, float(cm) / t, run.published if published else None,
                         run.metric if published else "")


def _check(a) -> int:
    fit, preds = M.check()
    print(f"fitted on {len(fit.fitted_on)} runs (all A100): {', '.join(fit.fitted_on)}")
    print(f"constants: η = {fit.params.eta:.2f} (GEMM efficiency), c_mem = {fit.params.c_mem:g} (element-wise "
          f"traffic), bw_eff = {fit.params.bw_eff:.2f} (collective bandwidth); fit loss {fit.loss:.3f}\n")
    print(f"{'run':46s} {'gpu':15s} {'GPUs':>6s} {'metric':>6s} {'published':>10s} {'predicted':>10s} {'error':>7s}")
    for p, r in zip(preds, M.load_runs()):
        print(f"{p.name[:46]:46s} {p.gpu:15s} {p.n_gpus:6d} {r.metric:>6s} {p.published:10.3f} {p.predicted:10.3f} "
              f"{p.error:+7.1%}{'  (fitted on)' if p.fitted_on_it else ''}")
    rows = [("out of sample", preds)] + [(f"  {g}", [p for p in preds if p.gpu == g])
                                         for g in dict.fromkeys(p.gpu for p in preds)]
    if a.loo:
        rows.append(("leave-one-out (all runs)", M.leave_one_out()))
    print()
    for label, ps in rows:
        s = M.summary(ps)
        print(f"{label}: n = {s['n']}, median |error| {s['median']:.1%}, worst {s['worst']:.1%} ({s['worst_run']}), "
              f"{s['within_10pct']} within 10 %")
    if a.own:
        from helpers.training.calc import mfuown
        own = mfuown.check(fit.params)
        print(f"\nthe book's own H200 runs (tokens/s; GEMM roof {mfuown.h200_mamf_tflops():.0f} TFLOP/s measured here):")
        for p in own:
            print(f"  {p.run:55s} measured {p.tokens_per_s_measured:8.0f} predicted {p.tokens_per_s_predicted:8.0f} "
                  f"{p.error:+7.1%}")
        s = mfuown.summary(own)
        print(f"  compiled: median |error| {s['compiled_median']:.1%}, worst {s['compiled_worst']:.1%}; eager: "
              f"over-predicted by {s['eager_min']:.0%} to {s['eager_max']:.0%} (unfused element-wise kernels)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers mfumodel", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="print the out-of-sample check and exit")
    ap.add_argument("--loo", action="store_true", help="with --check: add leave-one-out")
    ap.add_argument("--own", action="store_true", help="with --check: add the book's own H200 runs")
    ap.add_argument("--run", type=cli.name_of([r.name for r in M.load_runs()]), help="start from this published run")
    ap.add_argument("--gpu", type=cli.name_of(_gpus()), help="GPU (spec table name) or TPU v4")
    ap.add_argument("--params", type=cli.bounded_float(1e6, 1e14), help="parameters (e.g. 8e9)")
    for dest, (_, typ, hlp) in LAYOUT_FLAGS.items():
        ap.add_argument(f"--{dest.replace('_', '-')}", dest=dest, type=typ, choices=CHOICES.get(dest), help=hlp)
    for dest in SWITCHES:
        ap.add_argument(f"--{dest.replace('_', '-')}", dest=dest, action="store_true", help=f"set {dest}")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.check:
        return _check(a)
    fit, _ = M.check()
    run, published = build_run(a)
    p = predict(run, fit.params, published)
    if a.json or a.out:
        results.emit([p], "mfu_prediction", a, fitted_on=list(fit.fitted_on), constants=vars(fit.params))
    if not a.json:
        print(f"{p.name}: predicted MFU {p.mfu_predicted:.1%} ({p.tflops_per_gpu:.0f} TFLOP/s per GPU), step "
              f"{p.step_time_s:.2f} s, {p.tokens_per_s_per_gpu:,.0f} tokens/s per GPU; bubble {p.bubble_share:.0%}, "
              f"exposed communication {p.comm_share:.0%} of the step")
        if p.published is not None:
            print(f"  published: {p.published:g} ({p.published_metric}); the model was "
                  f"{'fitted on this run' if run.name in fit.fitted_on else 'not fitted on this run'}")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
