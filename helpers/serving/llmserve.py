"""``python -m helpers llmserve``: decode (eager, CUDA graph), paged continuous batching and prefill of a
Llama-shaped model with random weights, each against its bound (chapters 19 and 21).

Records (``--out FILE``): kind ``llm_decode`` for the decode paths and the load runs, ``llm_prefill`` for prefill
(in the same file, told apart by their ``kind`` field). The measurement code is in ``helpers.serving.llmdecode``
(static cache, graphs, prefill) and ``helpers.serving.pagedkv`` (block tables, Poisson load). Random weights: the
rates are right, the tokens meaningless.

    python -m helpers llmserve --model tiny --batch 1,4 --context 64 --rates 20,80 --prefill 32 --out /tmp/llm.json
    python -m helpers llmserve --model llama3-8b --paths eager,graph --batch 1 --context 1024 --out llm_decode.json
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import torch

from helpers.serving import llama, llmdecode, pagedkv

PATHS = ("eager", "graph", "graph-compiled", "graph-flash", "paged")


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
    ap.add_argument("--prefill", type=cli.csv_of(cli.positive_int), default=[32], help="prompt lengths to prefill")
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
    for path in [p for p in a.paths if p != "paged"]:
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
    recs += [llmdecode.bench_prefill(model, n) for n in a.prefill]
    results.emit(recs, "llm_decode", a, model=cfg.name, params=llama.count_params(model),
                 weights="random (right for speed, meaningless for answers)")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
