"""``python -m helpers llmserve``: decode (eager, CUDA graph), paged continuous batching and prefill of a
Llama-shaped model with random weights, each against its bound, and the model's matrix products alone (chapters 19
and 21).

Records (``--out FILE``): kind ``llm_decode`` for the decode paths and the load runs, ``llm_prefill`` for prefill,
``llm_gemv`` for ``--paths gemv`` (each weight shape at M = batch rows), in the same file, told apart by ``kind``.
The measurement code is in ``helpers.serving.llmdecode`` (static cache, graphs, prefill), ``helpers.serving.pagedkv``
(block tables, Poisson load) and here (the load runs, the lone matrix products). Random weights: the rates are
right, the tokens meaningless.

    python -m helpers llmserve --model tiny --batch 1,4 --context 64 --rates 20,80 --prefill 32 --out /tmp/llm.json
    python -m helpers llmserve --model llama3-8b --paths eager,graph --batch 1 --context 1024 --out llm_decode.json
    python -m helpers llmserve --model llama3-8b --paths gemv --batch 1,64 --prefill 0 --out llm_gemv.json
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from helpers.serving import llama, llmdecode, pagedkv

PATHS = ("eager", "graph", "graph-compiled", "graph-flash", "paged", "gemv")
WEIGHTS = ("wqkv", "wo", "w13", "w2")            # one of each per layer; then the LM head once per step


@dataclass(frozen=True)
class GemvResult:
    kind: str                      # "llm_gemv"
    model: str
    weight: str                    # wqkv | wo | w13 | w2 | lm_head | all (every product of one decode step)
    out_features: int | None       # None for "all"
    in_features: int | None
    per_step: int                  # products of this shape in one decode step (n_layers; 1 for the LM head)
    batch: int                     # M: rows of activations, one per sequence of the decode batch
    dtype: str
    device: str
    graph: bool                    # replayed from a CUDA graph, as the decode paths launch them
    time_us: float                 # per product ("all": the products of one step, summed)
    bytes_moved: float             # weight + input + output, each read or written once
    achieved_GBps: float
    bw_GBps: float
    bw_source: str
    fraction_of_bw: float          # achieved_GBps / bw_GBps (not fraction_of_hbm_bound: no decode step here)
    achieved_TFLOPs: float
    sm_clock_MHz_median: float | None = None
    power_W_median: float | None = None
    throttle_reasons: tuple = ()


def _time_us(run, dev, min_time_s: float) -> float:
    """Mean µs per call of ``run``, repeated for at least ``min_time_s``; on a GPU ``run`` is captured once in a
    CUDA graph and the graph replayed (no launch gaps from Python, as in the decode paths)."""
    if dev.type == "cuda":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):                     # warm-up on a side stream before capture (cuBLAS workspaces)
            run()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            run()
        run = g.replay
    run()
    llmdecode._sync(dev)
    t0 = time.perf_counter()
    run()
    llmdecode._sync(dev)
    repeats = min(10_000, max(5, int(min_time_s / max(time.perf_counter() - t0, 1e-9)) + 1))
    t0 = time.perf_counter()
    for _ in range(repeats):
        run()
    llmdecode._sync(dev)
    return (time.perf_counter() - t0) / repeats * 1e6


def bench_gemv(model: dict, batch: int, bw: tuple[float, str], min_time_s: float = 0.3) -> list[GemvResult]:
    """Each weight shape of the model times ``batch`` activation rows, ``F.linear`` in the model's dtype, as a
    decode step multiplies them: every layer's own copy in turn, so the weights stream from HBM and not from L2.
    Then ``all``: the per-step products summed — the time a decode step would take if it were only its matrix
    products, back to back (attention, norms and the KV cache left out)."""
    cfg, dev, dtype = model["cfg"], model["embed"].device, model["embed"].dtype
    es = model["embed"].element_size()
    mats = {n: [ly[n] for ly in model["layers"]] for n in WEIGHTS} | {"lm_head": [model["lm_head"]]}
    g = torch.Generator(device=dev).manual_seed(0)
    out, total_us, total_B, total_F = [], 0.0, 0.0, 0.0
    with torch.inference_mode():
        for name, ws in mats.items():
            n_out, n_in = ws[0].shape
            x = torch.randn(batch, n_in, device=dev, dtype=dtype, generator=g)
            s = llmdecode._sampler(dev)
            if s:
                s.start()
            t_us = _time_us(lambda x=x, ws=ws: [F.linear(x, w) for w in ws], dev, min_time_s) / len(ws)
            if s:
                s.stop()
            nbytes = float(es * (n_out * n_in + batch * (n_in + n_out)))
            flop = 2.0 * batch * n_out * n_in
            out.append(GemvResult("llm_gemv", cfg.name, name, n_out, n_in, len(ws), batch, str(dtype), str(dev),
                                  dev.type == "cuda", t_us, nbytes, nbytes / t_us / 1e3, bw[0], bw[1],
                                  nbytes / t_us / 1e3 / bw[0], flop / t_us / 1e6, **llmdecode._sampled(s)))
            total_us, total_B, total_F = total_us + len(ws) * t_us, total_B + len(ws) * nbytes, total_F + len(ws) * flop
    out.append(GemvResult("llm_gemv", cfg.name, "all", None, None, 1, batch, str(dtype), str(dev), dev.type == "cuda",
                          total_us, total_B, total_B / total_us / 1e3, bw[0], bw[1], total_B / total_us / 1e3 / bw[0],
                          total_F / total_us / 1e6))
    return out


def bench_load(model: dict, rate_per_s: float, requests: int, prompt_len: int, max_new: int, max_batch: int,
               bw: tuple[float, str], block_tokens: int = 16, seed: int = 0) -> llmdecode.DecodeResult:
    """Poisson arrivals at ``rate_per_s`` served by continuous batching on the paged cache. Output lengths are
    uniform in [max_new/2, max_new] (seeded). tokens_per_s = generated tokens ÷ wall time (idle gaps skipped)."""
    cfg, dev = model["cfg"], model["embed"].device
    g = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(0, cfg.vocab, (prompt_len,), generator=g).to(dev) for _ in range(requests)]
    out_lens = torch.randint(max(1, max_new // 2), max_new + 1, (requests,), generator=g).tolist()
    n_blocks = max_batch * -(-(prompt_len + max_new) // block_tokens) + 1
    ok, why = llmdecode.fits(cfg, n_blocks * block_tokens, 1, dev)
    base = llmdecode.DecodeResult("llm_decode", cfg.name, llama.count_params(model), "paged", str(dev), max_batch,
                                  prompt_len, None, None, None, bw[0], bw[1], None, None, rate_per_s, requests)
    if not ok:
        return replace(base, note=why)
    cache = pagedkv.PagedKVCache(cfg, n_blocks, block_tokens, dev, model["embed"].dtype)
    s = llmdecode._sampler(dev)
    with torch.inference_mode():
        pagedkv.run_load(model, cache, pagedkv.poisson_arrivals(rate_per_s, 2, seed)[:1] * 0, prompts[:1], [2],
                         max_batch)                                                  # warm-up: one short request
        if s:
            s.start()
        run = pagedkv.run_load(model, cache, pagedkv.poisson_arrivals(rate_per_s, requests, seed), prompts,
                               out_lens, max_batch, sync=lambda: llmdecode._sync(dev))
        if s:
            s.stop()
    lat = pagedkv.latency_summary(run.arrival_s, run.first_token_s, run.finish_s, run.n_tokens)
    mean_b = run.mean_batch
    ctx_mean = prompt_len + max_new * 0.75 / 2                       # mean context over a request's decode steps
    bpstep = llmdecode.dform.decode_bytes_per_step(cfg.weight_bytes_read(max(1, round(mean_b))), cfg.n_layers,
                                                   cfg.n_kv_heads, cfg.head_dim, round(mean_b * ctx_mean))
    bound = llmdecode.dform.hbm_bound_tokens_per_s(max(1, round(mean_b)), bpstep, bw[0])
    tps = sum(run.n_tokens) / run.wall_s
    return replace(base, batch=max(1, round(mean_b)), tokens_per_s=tps, bytes_per_step_GB=bpstep / 1e9,
                   hbm_bound_tokens_per_s=bound, fraction_of_hbm_bound=None, **lat, **llmdecode._sampled(s),
                   note=f"max_batch {max_batch}, mean running batch {mean_b:.1f}, {run.decode_steps} decode steps, "
                        f"prompts {prompt_len}, outputs {max_new // 2}-{max_new} tokens; tokens_per_s includes "
                        "prefill and queueing, so it is not a fraction of the decode bound")


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, device, results
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=cli.name_of(sorted(llama.CONFIGS)), default="tiny")
    ap.add_argument("--paths", type=cli.csv_of(cli.name_of(PATHS)), default=["eager", "graph", "paged"],
                    help="eager; graph, graph-compiled, graph-flash (CUDA only); paged (the load runs)")
    ap.add_argument("--batch", type=cli.csv_of(cli.positive_int), default=[1, 8])
    ap.add_argument("--context", type=cli.csv_of(cli.positive_int), default=[64])
    ap.add_argument("--steps", type=cli.bounded_int(1, 100_000), default=20, help="timed decode steps per point")
    ap.add_argument("--rates", type=cli.csv_of(cli.bounded_float(0, 1e6, lo_open=True)), default=[20.0],
                    help="Poisson arrival rates (requests/s) for the paged load runs")
    ap.add_argument("--requests", type=cli.positive_int, default=16)
    ap.add_argument("--prompt-len", type=cli.positive_int, default=32)
    ap.add_argument("--max-new", type=cli.bounded_int(1, 100_000), default=16)
    ap.add_argument("--max-batch", type=cli.positive_int, default=8)
    ap.add_argument("--prefill", type=cli.csv_of(cli.bounded_int(0, 1 << 16)), default=[32],
                    help="prompt lengths to prefill (0: none)")
    ap.add_argument("--dtype", type=cli.name_of(("bf16", "fp32")), default="bf16")
    ap.add_argument("--device", type=cli.name_of(("auto", "cpu", "cuda")), default="auto")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    dev, _ = device.pick_device(None if a.device == "auto" else a.device)
    cfg = llama.config(a.model)
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        if 2 * cfg.params() * 1.1 > free:
            raise SystemExit(f"{cfg.name} needs {2 * cfg.params() / 1e9:.1f} GB of weights, {free / 1e9:.1f} GB free")
    if max(a.context + [a.prompt_len + a.max_new] + a.prefill) > 1 << 16:
        ap.error("context, prompt-len + max-new and prefill lengths must be ≤ 65536 (the RoPE table's length)")
    model = llama.build(cfg, dev, torch.bfloat16 if a.dtype == "bf16" else torch.float32)
    bw = llmdecode.bandwidth(dev)
    recs: list = []
    for path in [p for p in a.paths if p not in ("paged", "gemv")]:
        for ctx in a.context:
            for b in a.batch:
                try:
                    recs.append(llmdecode.bench_decode(model, b, ctx, path, a.steps, bw))
                except Exception as e:  # noqa: BLE001 — a failed capture or compile is recorded, not fatal
                    if path == "eager":
                        raise
                    recs.append(replace(llmdecode.bench_decode(model, b, ctx, "graph", 0, bw, dry=True),
                                        path=path, note=f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"))
                print(f"  {path} B={b} ctx={ctx}: {recs[-1].tokens_per_s} tok/s, "
                      f"{recs[-1].fraction_of_hbm_bound} of bound {recs[-1].note}", file=sys.stderr)
    if "paged" in a.paths:
        for r in a.rates:
            recs.append(bench_load(model, r, a.requests, a.prompt_len, a.max_new, a.max_batch, bw))
            print(f"  paged rate={r}/s: TTFT p50 {recs[-1].ttft_ms_p50} ms, TPOT p50 {recs[-1].tpot_ms_p50} ms",
                  file=sys.stderr)
    for b in a.batch if "gemv" in a.paths else []:
        recs += bench_gemv(model, b, bw)
        print(f"  gemv B={b}: " + ", ".join(f"{r.weight} {r.fraction_of_bw:.2f}" for r in recs[-6:])
              + " of the bandwidth", file=sys.stderr)
    recs += [llmdecode.bench_prefill(model, n) for n in a.prefill if n]
    results.emit(recs, "llm_decode", a, model=cfg.name, params=llama.count_params(model),
                 weights="random (right for speed, meaningless for answers)")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
