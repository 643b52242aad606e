"""Train a Llama-style decoder (``helpers.training.models.llama``) and measure step time, tokens/s and MFU (chapter 18).

One record (kind ``llm_train``) per configuration of the sweep config × batch × compile × SDPA backend × precision
× activation checkpointing. Each runs ``--warmup`` untimed steps (torch.compile compiles in the first) and then
``--steps`` timed ones, timed on the device (CUDA events, one synchronisation at the end; no ``.item()`` per
step); ``step_time_ms`` is their median. On a GPU the timed window lasts at least a second and NVML samples it
(SM clock, power, throttle reasons: ``helpers.core.gpusampler``). MFU (PaLM App. B; ``helpers.formulas.flops``):

    MFU = tokens/s × (6·N + 6·L·T·d_attn) / peak    (6·L·T·d = PaLM's 12·L·T·d halved for causal attention)

with the datasheet's dense bf16 peak on a GPU (``helpers.core.specs``), and on a CPU — which has no datasheet
peak here — the rate of a 1024³ fp32 matmul measured on the spot (as ``gptmfu``), said so in ``peak_source``.
A backend or precision that cannot run here gives a record with ``status: skipped: <why>``; running out of GPU
memory gives ``status: oom: …`` and the sweep goes on; any other failure ``failed: …`` (exit 1 at the end).

    python -m helpers llmtrain --config tiny --steps 40 --data text           # CPU: a real loss curve
    python -m helpers llmtrain --config llama-1b --seq-len 2048 --batch 8 --compile 0,1 --sdpa flash,cudnn \\
        --precision bf16-mixed,bf16-pure --out llm_train.json                 # GPU
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from helpers.formulas import flops
from helpers.training.models import llama
from helpers.training.profiling import llmprofile, llmsetup
from helpers.training.profiling.gpt_mfu import gemm_peak_flops


@dataclass(frozen=True)
class LLMTrainResult:
    config: str
    params: int
    params_non_embedding: int
    precision: str
    compile: bool
    sdpa: str
    checkpoint: bool
    seq_len: int
    batch: int
    tokens_per_step: int
    flops_per_token: int
    status: str = "ok"                      # ok | skipped: why | oom: … | failed: …
    device: str = ""
    data: str = ""
    warmup_steps: int = 0
    timed_steps: int = 0
    first_steps_s: float | None = None      # the warm-up steps, torch.compile included
    step_time_ms: float | None = None       # median of the timed steps
    step_time_ms_min: float | None = None
    tokens_per_s: float | None = None
    achieved_TFLOPs: float | None = None
    peak_TFLOPs: float | None = None
    peak_source: str = ""
    mfu: float | None = None
    mfu_palm: float | None = None           # the same run with PaLM's count (attention not halved for the mask)
    peak_memory_GiB: float | None = None
    loss_first: float | None = None
    loss_last: float | None = None
    loss_curve: tuple = ()                  # every step's loss, warm-up included
    profile: dict | None = None
    sm_clock_MHz_median: float | None = None
    sm_clock_MHz_min: float | None = None
    power_W_median: float | None = None
    power_W_max: float | None = None
    power_source: str | None = None
    throttle_reasons: tuple = ()
    sampler_note: str = ""


def _peak(dev) -> tuple[float, str]:
    """Peak FLOP/s for MFU and where it comes from."""
    if dev.type == "cuda":
        from helpers.core import specs
        spec = specs.lookup(torch.cuda.get_device_name(dev))
        if spec:
            return spec.training_peak("bf16")[0] * 1e12, f"datasheet dense bf16 ({spec.name})"
        return gemm_peak_flops(dev, 8192, torch.bfloat16), "measured bf16 GEMM 8192³ (GPU not in the table)"
    return gemm_peak_flops(dev), "measured fp32 GEMM 1024³ on this CPU (fraction of its own matmul rate)"


def _skip_reason(base: LLMTrainResult, dev) -> str | None:
    cfg = llama.config(base.config)
    if base.precision == "fp8-mixed":
        why = llmsetup.fp8_unavailable(dev)
        if why:
            return why
    dtype = torch.float32 if base.precision == "fp32" else torch.bfloat16
    why = llmsetup.sdpa_unavailable(base.sdpa, dev, dtype, cfg.head_dim)
    return f"SDPA backend {base.sdpa} unavailable here: {why}" if why else None


def run_one(base: LLMTrainResult, dev, steps: int, warmup: int, data: str, lr: float = 1e-3,
            profile: bool = False, seed: int = 0) -> LLMTrainResult:
    """Build, prepare, warm up, time (and optionally profile) one configuration; the record."""
    why = _skip_reason(base, dev)
    if why:
        return replace(base, status=f"skipped: {why}", device=str(dev))
    cuda = dev.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(dev)
    model = llmsetup.prepare(llama.build(base.config, dev, seed), base.precision, base.sdpa, base.checkpoint,
                             base.compile)
    opt = llmsetup.optimizer(model, lr)
    tokens = llmsetup.Tokens(data, model.cfg.vocab_size, base.batch, base.seq_len, dev, seed + 1)
    amp = llmsetup.autocast_dtype(base.precision)

    def forward(batch):
        with torch.autocast(dev.type, dtype=amp or torch.float32, enabled=amp is not None):
            return model(*batch)

    def backward(loss):
        loss.backward()

    def opt_step():
        opt.step()
        opt.zero_grad(set_to_none=True)

    def step():
        loss = forward(tokens.next())
        backward(loss)
        opt_step()
        return loss.detach()

    clock = llmprofile._Clock(dev)
    t0 = time.perf_counter()
    losses = [step() for _ in range(warmup)]
    if cuda:
        torch.cuda.synchronize(dev)
    first_s = time.perf_counter() - t0
    t1 = time.perf_counter()                      # one more step, synchronised, to size the ≥ 1 s window
    losses.append(step())
    if cuda:
        torch.cuda.synchronize(dev)
    n = max(steps, math.ceil(1.0 / max(time.perf_counter() - t1, 1e-6)) + 1) if cuda else steps
    from helpers.core import gpusampler
    sampler = gpusampler.Sampler.for_torch_device(dev) if cuda else None
    if sampler:
        sampler.start()
    marks = [clock.mark()]
    for _ in range(n):
        losses.append(step())
        marks.append(clock.mark())
    if cuda:
        torch.cuda.synchronize(dev)
    if sampler:
        sampler.stop()
    times = [clock.ms(a, b) for a, b in zip(marks, marks[1:])]
    prof = None
    if profile:
        prof = llmprofile.phases((tokens.next, forward, backward, opt_step), dev)
        prof.update(llmprofile.kernels(step, dev))
    curve = torch.stack(losses).float().cpu().tolist()
    step_ms = statistics.median(times)
    tps = base.tokens_per_step / (step_ms / 1e3)
    peak, src = _peak(dev)
    s = sampler.summary() if sampler else {"sampler_note": "CPU run: no GPU to sample"}
    return replace(
        base, device=str(torch.cuda.get_device_name(dev) if cuda else "cpu"), data=tokens.describe,
        warmup_steps=warmup + 1, timed_steps=n, first_steps_s=round(first_s, 3), step_time_ms=round(step_ms, 3),
        step_time_ms_min=round(min(times), 3), tokens_per_s=round(tps, 1),
        achieved_TFLOPs=round(tps * base.flops_per_token / 1e12, 4), peak_TFLOPs=round(peak / 1e12, 3),
        peak_source=src, mfu=round(flops.mfu(tps, base.flops_per_token, 1, peak / 1e12), 4),
        mfu_palm=round(flops.mfu(tps, llama.flops_per_token(base.config, base.seq_len, causal=False), 1,
                                 peak / 1e12), 4),
        peak_memory_GiB=round(torch.cuda.max_memory_allocated(dev) / 2**30, 2) if cuda else None,
        loss_first=round(curve[0], 4), loss_last=round(curve[-1], 4), loss_curve=tuple(round(x, 4) for x in curve),
        profile=prof, sm_clock_MHz_median=s.get("sm_clock_MHz_median"), sm_clock_MHz_min=s.get("sm_clock_MHz_min"),
        power_W_median=s.get("power_W_median"), power_W_max=s.get("power_W_max"),
        power_source=s.get("power_source"), throttle_reasons=tuple(s.get("throttle_reasons", ())),
        sampler_note=s.get("sampler_note", ""))


def _oom(e: BaseException) -> bool:
    return isinstance(e, torch.cuda.OutOfMemoryError) or "out of memory" in str(e).lower()


def _clean(dev) -> None:
    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    torch._dynamo.reset()                         # a fresh compile per configuration (and no recompile limit)


def sweep(configs, batches, seq_len, compiles, sdpas, precisions, checkpoints, dev, steps=20, warmup=5,
          data="random", lr=1e-3, profile=False) -> list[LLMTrainResult]:
    """One record per combination; OOM and failures become records and the sweep goes on."""
    out = []
    for name, b, c, sd, pr, ck in itertools.product(configs, batches, compiles, sdpas, precisions, checkpoints):
        cnt = llama.count_params(name)
        base = LLMTrainResult(name, cnt["total"], cnt["non_embedding"], pr, bool(c), sd, bool(ck), seq_len, b,
                              b * seq_len, llama.flops_per_token(name, seq_len))
        try:
            rec = run_one(base, dev, steps, warmup, data, lr, profile)
        except Exception as e:  # noqa: BLE001 — one configuration's failure is a record, not the end of the sweep
            msg = " ".join(str(e).split())[:300] or type(e).__name__
            rec = replace(base, device=str(dev), status=("oom: " if _oom(e) else f"failed: {type(e).__name__}: ")
                          + msg)
        out.append(rec)
        _clean(dev)
        print(f"  {name} b={b} compile={c} sdpa={sd} {pr} ckpt={ck}: {rec.status}"
              + (f" {rec.tokens_per_s:,.0f} tok/s MFU {rec.mfu:.3f}" if rec.status == "ok" else ""),
              file=sys.stderr, flush=True)
    return out


COLUMNS = ["config", "precision", "compile", "sdpa", "checkpoint", "batch", "seq_len", "step_time_ms",
           "tokens_per_s", "mfu", "peak_memory_GiB", "loss_first", "loss_last", "status"]


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, device, results
    bit = cli.name_of(("0", "1"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=cli.csv_of(cli.name_of(tuple(llama.CONFIGS))), default=["tiny"])
    ap.add_argument("--seq-len", type=cli.bounded_int(8, 131072), default=None,
                    help="tokens per sequence (default 128 for tiny, 2048 otherwise)")
    ap.add_argument("--batch", type=cli.csv_of(cli.bounded_int(1, 4096)), default=[8], help="micro-batch")
    ap.add_argument("--steps", type=cli.bounded_int(1, 100_000), default=20, help="timed steps")
    ap.add_argument("--warmup", type=cli.bounded_int(1, 1000), default=5, help="untimed steps (compile happens here)")
    ap.add_argument("--compile", type=cli.csv_of(bit), default=["0"], help="0 (eager), 1 (torch.compile) or 0,1")
    ap.add_argument("--sdpa", type=cli.csv_of(cli.name_of(tuple(llmsetup.SDPA))), default=["flash"])
    ap.add_argument("--precision", type=cli.csv_of(cli.name_of(llmsetup.PRECISIONS)), default=None,
                    help="default bf16-mixed on a GPU, fp32 on the CPU")
    ap.add_argument("--checkpoint", type=cli.csv_of(bit), default=["0"], help="activation checkpointing per block")
    ap.add_argument("--data", choices=("auto", "random", "text"), default="auto",
                    help="auto: random tokens on a GPU, the book's text on the CPU")
    ap.add_argument("--lr", type=cli.bounded_float(0.0, 1.0, lo_open=True), default=1e-3)
    ap.add_argument("--profile", action="store_true", help="add a forward/backward/optimizer/data breakdown")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--append", action="store_true", help="add the records to an existing --out file")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.append and not a.out:
        raise ValueError("--append needs --out FILE (the document to add the records to)")
    dev = device.pick_device(None if a.device == "auto" else a.device)[0]
    if dev.type == "cuda":
        torch.set_float32_matmul_precision("high")           # TF32 for any fp32 matmul that is left
    seq = a.seq_len or (128 if a.config == ["tiny"] else 2048)
    data = a.data if a.data != "auto" else ("random" if dev.type == "cuda" else "text")
    precisions = a.precision or (["bf16-mixed"] if dev.type == "cuda" else ["fp32"])
    recs = new = sweep(a.config, a.batch, seq, [int(c) for c in a.compile], a.sdpa, precisions,
                 [int(c) for c in a.checkpoint], dev, a.steps, a.warmup, data, a.lr, a.profile)
    meta = {}
    if a.append and Path(a.out).exists():
        old = json.loads(Path(a.out).read_text())
        if old.get("kind") != "llm_train":
            raise ValueError(f"--append: {a.out} holds kind {old.get('kind')!r}, not llm_train; pick another --out")
        meta["earlier_runs"] = old.get("earlier_runs", []) + [old["provenance"]]
        recs = old["records"] + [results.to_dict(r) for r in recs]
    failed = any(r.status.startswith("failed") for r in new)
    results.emit(recs, "llm_train", a, COLUMNS, **meta)
    return 1 if failed else 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
