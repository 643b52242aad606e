"""The MFU model, fitted on A100 runs, predicting the book's own H200 training runs (chapter 28).

``assets/measurements/h200/llm_train.json`` holds the Llama-shaped runs of chapter 18 on one H200 (0.98 B and 3 B
parameters; bf16 with and without torch.compile; four attention backends; activation checkpointing): a GPU generation
:mod:`helpers.training.calc.mfumodel` never saw, measured by the book itself. Each record becomes a one-GPU
:class:`~helpers.training.calc.mfumodel.LayoutRun`: the model's shapes from :mod:`helpers.training.models.llama`,
PyTorch's ``flash`` attention backend as FlashAttention-2 (the backends without a published rate are timed at the GEMM
rate; ``math`` writes the scores to HBM), and as the GEMM roof the H200's maximum achievable matmul rate that the book
measured (``h200/gemm_sweep_cool``, short runs on a cool GPU, as mamf-finder measures the other GPUs). Predicted and
measured are compared in tokens per second, so no FLOP convention enters. The fp8 run is left out (the model has no
fp8 GEMM roof).

    for p in mfuown.check(): print(p.run, p.error)
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from helpers.core import measurements
from helpers.training.calc import mfumodel as M
from helpers.training.models import llama

GPU = "H200 SXM"
RECORD = "h200/llm_train"
SDPA_KERNEL = {"flash": "fa2"}          # torch's flash backend is FlashAttention-2 (PyTorch SDPA documentation)


@dataclass(frozen=True)
class OwnPrediction:
    run: str
    compiled: bool
    sdpa: str
    tokens_per_s_measured: float
    tokens_per_s_predicted: float
    error: float                        # predicted ÷ measured − 1


def h200_mamf_tflops() -> float:
    """The H200's maximum achievable bf16 matmul rate measured by the book (best shape, cool GPU)."""
    (row,) = [s for s in measurements.load("h200/gemm_sweep_cool")["summary"] if s["what"] == "GEMM bf16"]
    return float(row["value"])


def layout_run(rec: dict, mamf_tflops: float) -> M.LayoutRun:
    """One llm_train record as a one-GPU run of the MFU model."""
    c = llama.config(rec["config"])
    lay = {"n_layers": c.n_layers, "hidden": c.d_model, "ffn": c.d_ff, "glu": True, "heads": c.n_heads,
           "kv_hidden": c.d_model // c.n_heads * c.n_kv_heads, "vocab": c.vocab_size, "seq_len": rec["seq_len"],
           "tp": 1, "pp": 1, "dp": 1, "cp": 1, "micro_batch": rec["batch"], "global_batch": rec["batch"],
           "recompute": "full" if rec["checkpoint"] else "none", "sequence_parallel": False,
           "flash": rec["sdpa"] != "math", "dp_mode": "allreduce", "ib_GBps_per_gpu": 50.0, "convention": "6N+attn"}
    if rec["sdpa"] in SDPA_KERNEL:
        lay["attn_kernel"] = SDPA_KERNEL[rec["sdpa"]]
    name = (f"{rec['config']} {rec['precision']} {'compiled' if rec['compile'] else 'eager'} {rec['sdpa']} "
            f"{rec['batch']}×{rec['seq_len']}{' checkpointed' if rec['checkpoint'] else ''}")
    return M.LayoutRun(name, GPU, 1, float(rec["params"]), lay, float(rec["tokens_per_s"]), "mfu",
                       f"assets/measurements/{RECORD}.json", "measured by the book (chapter 18)", mamf_tflops=mamf_tflops)


def check(params: M.Params | None = None) -> list[OwnPrediction]:
    """Every bf16 run of the record predicted with the constants fitted on the A100 runs (or ``params``)."""
    params = params or M.check()[0].params
    mamf = h200_mamf_tflops()
    out = []
    for rec in measurements.load(RECORD)["records"]:
        if not rec.get("tokens_per_s") or not str(rec["precision"]).startswith("bf16"):
            continue
        run = layout_run(rec, mamf)
        t = float(M.step_time(run, params.eta, params.c_mem, params.bw_eff)[0])
        tps = rec["batch"] * rec["seq_len"] / t
        out.append(OwnPrediction(run.name, bool(rec["compile"]), rec["sdpa"], float(rec["tokens_per_s"]), tps,
                                 tps / rec["tokens_per_s"] - 1))
    return out


def summary(preds: list[OwnPrediction]) -> dict:
    """Median and worst |error| of the compiled runs; smallest and largest error of the eager ones."""
    comp = [abs(p.error) for p in preds if p.compiled]
    eager = [p.error for p in preds if not p.compiled]
    return {"n_compiled": len(comp), "compiled_median": statistics.median(comp), "compiled_worst": max(comp),
            "n_eager": len(eager), "eager_min": min(eager), "eager_max": max(eager)}
