"""Decode of a Llama-shaped model against the memory-bandwidth bound: eager, CUDA graph, paged (chapters 19, 21).

A decode step reads every weight once and each sequence's KV cache once, and does little arithmetic per byte, so
its speed limit is bandwidth: ``hbm_bound_tokens_per_s = B · bandwidth / bytes_per_step``
(``helpers.formulas.decode``; the H200's datasheet 4.8 TB/s from ``helpers.core.specs``). The paths measured:

* ``eager`` — :func:`helpers.serving.llama.decode_step` launched op by op from Python with a static, contiguous cache;
* ``graph`` — the same step captured once in a CUDA graph (``torch.cuda.CUDAGraph``) and replayed: the token ids,
  the position (a device tensor) and the caches are allocated *before* capture and mutated in place, so the
  captured ``index_copy_`` into the cache stays valid replay after replay, and ~600 kernel launches become one;
* ``graph-compiled`` — the same graph, but the norms, RoPE, masking and SwiGLU of each layer fused by
  ``torch.compile`` first (the cache writes stay eager): fewer, larger kernels inside the graph;
* ``graph-flash`` — as ``graph-compiled`` with attention by ``F.scaled_dot_product_attention(enable_gqa=True)``
  (FlashAttention) over the full cache: valid here because the timed step's position is the cache's last slot;
* ``paged`` — the block-table cache of ``helpers.serving.pagedkv`` under Poisson arrivals with continuous batching
  (eager: its shapes change every step), TTFT and TPOT p50/p99 per rate;
* ``prefill`` — a prompt at once, compute-bound: its MFU (``helpers.formulas.flops``) over the dense bf16 peak.

The weights are random: right for speed, meaningless for answers. On a CPU the same code runs the ``tiny`` model;
the bound there uses this CPU's measured copy bandwidth (a STREAM-style copy, said in ``bw_source``).

    python -m helpers llmserve --model tiny --batch 1,4 --context 64 --out /tmp/llm.json
    python -m helpers llmserve --model llama3-8b --paths eager,graph --batch 1 --context 1024
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace

import torch

from helpers.formulas import decode as dform
from helpers.formulas import flops
from helpers.serving import llama


@dataclass(frozen=True)
class DecodeResult:
    kind: str                      # "llm_decode"
    model: str
    params: int
    path: str                      # eager | graph | paged
    device: str
    batch: int                     # sequences per step (paged: mean running batch)
    context: int                   # tokens of context per sequence read by a step (paged: prompt length)
    step_time_ms: float | None
    tokens_per_s: float | None
    bytes_per_step_GB: float | None
    bw_GBps: float
    bw_source: str
    hbm_bound_tokens_per_s: float | None
    fraction_of_hbm_bound: float | None
    rate_per_s: float | None = None
    requests: int | None = None
    ttft_ms_p50: float | None = None
    ttft_ms_p99: float | None = None
    tpot_ms_p50: float | None = None
    tpot_ms_p99: float | None = None
    sm_clock_MHz_median: float | None = None
    power_W_median: float | None = None
    throttle_reasons: tuple = ()
    note: str = ""


@dataclass(frozen=True)
class PrefillResult:
    kind: str                      # "llm_prefill"
    model: str
    params: int
    device: str
    prompt_len: int
    time_ms: float
    tokens_per_s: float
    flops_per_token: float
    peak_TFLOPs: float
    peak_source: str
    mfu: float
    sm_clock_MHz_median: float | None = None
    power_W_median: float | None = None
    throttle_reasons: tuple = ()


def bandwidth(dev) -> tuple[float, str]:
    """(GB/s, where it comes from): the datasheet HBM figure on a known GPU, else a measured copy."""
    from helpers.core import specs
    if dev.type == "cuda":
        spec = specs.lookup(torch.cuda.get_device_name(dev))
        if spec:
            return float(spec.hbm_GBps), f"datasheet ({spec.name})"
    a = torch.ones(32 * 2**20, device=dev)                      # 128 MiB fp32, past any cache
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(5):
        _sync(dev)
        t0 = time.perf_counter()
        b.copy_(a)
        _sync(dev)
        best = min(best, time.perf_counter() - t0)
    return 2 * a.numel() * 4 / best / 1e9, "measured torch copy (2 words/element, STREAM counting) on this device"


def _sync(dev) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _sampler(dev):
    from helpers.core import gpusampler
    return gpusampler.Sampler.for_torch_device(dev) if dev.type == "cuda" else None


def _sampled(s) -> dict:
    if s is None:
        return {}
    m = s.summary()
    return {"sm_clock_MHz_median": m["sm_clock_MHz_median"], "power_W_median": m["power_W_median"],
            "throttle_reasons": tuple(m["throttle_reasons"])}


class StaticDecoder:
    """Static buffers for :func:`llama.decode_step`: ``tokens`` [B], ``pos`` [1] and the contiguous caches, all
    allocated once. :meth:`step` runs eagerly; :meth:`capture` records one step in a CUDA graph, after which
    :meth:`replay` runs it on whatever the buffers hold (write new ids into ``tokens``, a position into ``pos``)."""

    def __init__(self, model: dict, batch: int, max_ctx: int, ops=llama.EAGER):
        dev = model["embed"].device
        self.model, self.ops = model, ops
        self.tokens = torch.zeros(batch, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.k, self.v = llama.new_cache(model["cfg"], batch, max_ctx, dev, model["embed"].dtype)
        self.graph, self.logits = None, None

    def step(self) -> torch.Tensor:
        self.logits = llama.decode_step(self.model, self.tokens, self.pos, self.k, self.v, self.ops)
        return self.logits

    def capture(self, warmup: int = 3) -> None:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):                  # warm-up on a side stream, as torch's CUDA-graph notes require
            for _ in range(warmup):
                self.step()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.logits = llama.decode_step(self.model, self.tokens, self.pos, self.k, self.v, self.ops)

    def replay(self) -> torch.Tensor:
        self.graph.replay()
        return self.logits

    def generate(self, prompt: torch.Tensor, n_new: int, graph: bool = False) -> torch.Tensor:
        """Greedy: prefill ``prompt`` [B, T] into the cache, then ``n_new`` tokens by decode steps."""
        T = prompt.shape[1]
        logits, _ = llama.prefill(self.model, prompt, self.k, self.v)
        out = [logits.argmax(-1)]
        for p in range(T, T + n_new - 1):
            self.tokens.copy_(out[-1])
            self.pos.fill_(p)
            out.append((self.replay() if graph else self.step()).argmax(-1))
        return torch.stack(out, 1)


_COMPILED: list = []


def _compiled() -> tuple:
    """:func:`llama.compiled_ops`, compiled once per process (a recompile per new batch or context shape)."""
    if not _COMPILED:
        import torch._dynamo as dynamo
        for knob in ("cache_size_limit", "recompile_limit"):
            if hasattr(dynamo.config, knob):
                setattr(dynamo.config, knob, 64)
        _COMPILED.extend(llama.compiled_ops())
    return tuple(_COMPILED)


def fits(cfg: llama.LlamaConfig, batch: int, max_ctx: int, dev, weights_loaded: bool = True) -> tuple[bool, str]:
    """Whether the KV cache (and the weights if not yet loaded) fit in the GPU's free memory with 10 % spare."""
    if dev.type != "cuda":
        return True, ""
    need = dform.kv_read_bytes(cfg.n_layers, cfg.n_kv_heads, cfg.head_dim, batch * max_ctx)
    need += 0 if weights_loaded else 2 * cfg.params()
    free, _ = torch.cuda.mem_get_info(dev)
    ok = need * 1.1 + 2e9 < free
    return ok, "" if ok else f"skipped: needs {need / 1e9:.1f} GB of KV cache, {free / 1e9:.1f} GB free"


def bench_decode(model: dict, batch: int, context: int, path: str, steps: int, bw: tuple[float, str],
                 dry: bool = False) -> DecodeResult:
    """Time ``steps`` decode steps at a context of ``context`` tokens per sequence (every step reads them all).
    ``dry``: only the record's bound, nothing run."""
    cfg, dev = model["cfg"], model["embed"].device
    bpstep = dform.decode_bytes_per_step(cfg.weight_bytes_read(batch), cfg.n_layers, cfg.n_kv_heads, cfg.head_dim,
                                         batch * context)
    bound = dform.hbm_bound_tokens_per_s(batch, bpstep, bw[0])
    base = DecodeResult("llm_decode", cfg.name, llama.count_params(model), path, str(dev), batch, context, None,
                        None, bpstep / 1e9, bw[0], bw[1], bound, None)
    ok, why = fits(cfg, batch, context, dev)
    if dry or not ok:
        return replace(base, note=why)
    if path != "eager" and dev.type != "cuda":
        return replace(base, note="skipped: CUDA graphs need a GPU")
    ops = {"graph-compiled": _compiled, "graph-flash": lambda: (_compiled()[0], llama.full_cache_attention,
                                                                 _compiled()[2])}.get(path, lambda: llama.EAGER)()
    sd = StaticDecoder(model, batch, context, ops)
    sd.pos.fill_(context - 1)                      # the step at the last slot attends to all `context` tokens
    sd.tokens.random_(0, cfg.vocab)
    run = sd.step
    with torch.inference_mode():
        if path != "eager":
            sd.step()                              # compiles (graph-compiled) before the side-stream warm-up
            sd.capture()
            run = sd.replay
        for _ in range(3):
            run()
        _sync(dev)
        s = _sampler(dev)
        if s:
            s.start()
        t0 = time.perf_counter()
        for _ in range(steps):
            run()
        _sync(dev)
        dt = (time.perf_counter() - t0) / steps
        if s:
            s.stop()
    del sd
    if dev.type == "cuda":
        torch.cuda.empty_cache()                   # the graph's pool back, so the next point's memory check is right
    tps = batch / dt
    return replace(base, step_time_ms=dt * 1e3, tokens_per_s=tps, fraction_of_hbm_bound=tps / bound, **_sampled(s))


def prefill_flops_per_token(cfg: llama.LlamaConfig, prompt_len: int) -> float:
    """Forward FLOPs per prompt token: 2 per layer weight (``flops.gemm_flops``) + causal attention (half of
    ``flops.attention_flops``) + the LM head once per prompt (only the last position is projected)."""
    layers = flops.gemm_flops(prompt_len, cfg.n_layers * (cfg.layer_params() - 2 * cfg.d_model), 1)
    attn = flops.attention_flops(1, prompt_len, cfg.n_heads * cfg.head_dim, cfg.n_layers) / 2
    head = flops.gemm_flops(1, cfg.vocab, cfg.d_model)
    return (layers + attn + head) / prompt_len


def bench_prefill(model: dict, prompt_len: int, repeats: int = 5) -> PrefillResult:
    from helpers.core import specs
    cfg, dev = model["cfg"], model["embed"].device
    prompt = torch.randint(0, cfg.vocab, (1, prompt_len), device=dev)
    with torch.inference_mode():
        for _ in range(2):
            llama.prefill(model, prompt)
        _sync(dev)
        s = _sampler(dev)
        if s:
            s.start()
        t0 = time.perf_counter()
        for _ in range(repeats):
            llama.prefill(model, prompt)
        _sync(dev)
        dt = (time.perf_counter() - t0) / repeats
        if s:
            s.stop()
    spec = specs.lookup(torch.cuda.get_device_name(dev)) if dev.type == "cuda" else None
    if spec:
        peak, src = spec.training_peak("bf16")[0], f"datasheet bf16 dense ({spec.name})"
    else:
        a = torch.randn(1024, 1024, device=dev, dtype=model["embed"].dtype)
        t1 = time.perf_counter()
        for _ in range(3):
            a @ a
        _sync(dev)
        peak, src = flops.gemm_flops(1024, 1024, 1024) * 3 / (time.perf_counter() - t1) / 1e12, \
            "measured 1024³ GEMM in the model's dtype on this device"
    fpt = prefill_flops_per_token(cfg, prompt_len)
    tps = prompt_len / dt
    return PrefillResult("llm_prefill", cfg.name, llama.count_params(model), str(dev), prompt_len, dt * 1e3, tps,
                         fpt, peak, src, flops.mfu(tps, fpt, 1, peak), **_sampled(s))
