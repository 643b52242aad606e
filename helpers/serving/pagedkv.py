"""A paged KV cache with block tables, and continuous batching of Poisson arrivals on it (chapter 19).

The cache is a pool of fixed-size blocks, K and V each ``[n_layers, n_blocks, block_tokens, n_kv_heads, head_dim]``
(vLLM's PagedAttention, Kwon et al. 2023, arXiv:2309.06180 §4.1). A free list hands out blocks; each sequence owns a
*block table* (its blocks in order), so token ``p`` of a sequence lives in slot
``table[p // block_tokens] · block_tokens + p % block_tokens`` of the pool. A decode step writes the new K/V into
those slots, then *gathers* each sequence's K/V by its block table into a padded ``[B, Hkv, T, d]`` view and masks
the padding — the book's own, plain-torch version of what a paged-attention kernel does without the copy.

:func:`run_load` serves requests that arrive as a Poisson process (seeded): an arrival is prefilled (its first
token: TTFT), joins the running batch at the next decode step and leaves when it has its tokens, freeing its
blocks (Orca's iteration-level scheduling, Yu et al. 2022). :func:`latency_summary` turns the timeline into TTFT
and TPOT (time per output token after the first) percentiles.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from helpers.serving import llama


class PagedKVCache:
    def __init__(self, cfg: llama.LlamaConfig, n_blocks: int, block_tokens: int = 16, device="cpu",
                 dtype=torch.bfloat16):
        if n_blocks < 1 or block_tokens < 1:
            raise ValueError(f"n_blocks={n_blocks} and block_tokens={block_tokens} must be ≥ 1")
        shape = (cfg.n_layers, n_blocks, block_tokens, cfg.n_kv_heads, cfg.head_dim)
        self.k = torch.zeros(shape, device=device, dtype=dtype)
        self.v = torch.zeros(shape, device=device, dtype=dtype)
        self.cfg, self.bt, self.device = cfg, block_tokens, device
        self.free = list(range(n_blocks - 1, -1, -1))
        self.tables: dict[int, list[int]] = {}
        self.lengths: dict[int, int] = {}

    def blocks_needed(self, tokens: int) -> int:
        return -(-tokens // self.bt)

    def reserve(self, seq: int, new_len: int) -> bool:
        """Grow ``seq``'s block table to hold ``new_len`` tokens; False (nothing changed) if blocks ran out."""
        table = self.tables.setdefault(seq, [])
        need = self.blocks_needed(new_len) - len(table)
        if need > len(self.free):
            return False
        table.extend(self.free.pop() for _ in range(max(need, 0)))
        return True

    def release(self, seq: int) -> None:
        self.free.extend(reversed(self.tables.pop(seq, [])))
        self.lengths.pop(seq, None)

    def slots(self, seq: int, start: int, n: int) -> list[int]:
        t = self.tables[seq]
        return [t[p // self.bt] * self.bt + p % self.bt for p in range(start, start + n)]

    def write(self, layer: int, slots: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """k, v [n, Hkv, d] into the flat slots (n,)."""
        flat = (-1, self.cfg.n_kv_heads, self.cfg.head_dim)
        self.k[layer].view(flat).index_copy_(0, slots, k)
        self.v[layer].view(flat).index_copy_(0, slots, v)

    def gather(self, layer: int, table: torch.Tensor):
        """K, V of the sequences whose (padded) block tables are ``table`` [B, nb]: each [B, Hkv, nb·bt, d]."""
        B, nb = table.shape
        k = self.k[layer][table].view(B, nb * self.bt, self.cfg.n_kv_heads, -1).transpose(1, 2)
        v = self.v[layer][table].view(B, nb * self.bt, self.cfg.n_kv_heads, -1).transpose(1, 2)
        return k, v


def prefill_paged(model: dict, cache: PagedKVCache, seq: int, prompt: torch.Tensor) -> torch.Tensor:
    """Prefill one prompt [T] into ``seq``'s blocks; returns the logits of its last position [vocab]."""
    T = prompt.shape[0]
    if not cache.reserve(seq, T):
        raise RuntimeError(f"paged cache full: {T} tokens of sequence {seq} do not fit in {len(cache.free)} free "
                           "blocks: give the cache more blocks")
    logits, kvs = llama.prefill(model, prompt.view(1, T))
    slots = torch.tensor(cache.slots(seq, 0, T), device=prompt.device)
    for i, (k, v) in enumerate(kvs):
        cache.write(i, slots, k[0].transpose(0, 1), v[0].transpose(0, 1))
    cache.lengths[seq] = T
    return logits[0]


def decode_paged(model: dict, cache: PagedKVCache, seqs: list[int], tokens: torch.Tensor) -> torch.Tensor:
    """One decode step for sequences ``seqs`` (each at its own length) whose last tokens are ``tokens`` [B]:
    K/V written into their next slots, attention over their block tables. Returns logits [B, vocab] (fp32)."""
    cfg, dev = model["cfg"], tokens.device
    B = len(seqs)
    pos_l = [cache.lengths[s] for s in seqs]
    for s, p in zip(seqs, pos_l):
        if not cache.reserve(s, p + 1):
            raise RuntimeError(f"paged cache full at sequence {s}: give it more blocks (--blocks)")
    nb = max(len(cache.tables[s]) for s in seqs)
    table = torch.tensor([cache.tables[s] + [0] * (nb - len(cache.tables[s])) for s in seqs], device=dev)
    slots = torch.tensor([cache.slots(s, p, 1)[0] for s, p in zip(seqs, pos_l)], device=dev)
    pos = torch.tensor(pos_l, device=dev)
    valid = torch.arange(nb * cache.bt, device=dev).view(1, -1) <= pos.view(-1, 1)
    cos, sin = (t.index_select(0, pos).view(B, 1, 1, -1) for t in model["rope"])
    x = model["embed"].index_select(0, tokens).view(B, 1, cfg.d_model)
    for i, ly in enumerate(model["layers"]):
        q, k, v = llama.attn_in(x, ly["attn_norm"], ly["wqkv"], cos, sin, cfg.n_heads, cfg.n_kv_heads)
        cache.write(i, slots, k[:, :, 0], v[:, :, 0])
        kc, vc = cache.gather(i, table)
        x = llama.out_mlp(llama.grouped_attention(q, kc, vc, valid), x, ly["wo"], ly["mlp_norm"], ly["w13"], ly["w2"])
    for s in seqs:
        cache.lengths[s] += 1
    return F.linear(llama.rms_norm(x[:, 0], model["norm"]), model["lm_head"]).float()


def poisson_arrivals(rate_per_s: float, n: int, seed: int = 0) -> np.ndarray:
    """Arrival times (s) of a Poisson process: exponential gaps of mean 1/rate, seeded."""
    if rate_per_s <= 0 or n < 1:
        raise ValueError(f"rate_per_s={rate_per_s} > 0 and n={n} ≥ 1 needed")
    return np.cumsum(np.random.default_rng(seed).exponential(1.0 / rate_per_s, n))


def latency_summary(arrival_s, first_token_s, finish_s, n_tokens) -> dict:
    """TTFT = first token − arrival; TPOT = (finish − first token) / (tokens − 1), for requests with ≥ 2 tokens.
    p50/p99 in milliseconds."""
    a, f, e, n = (np.asarray(x, dtype=float) for x in (arrival_s, first_token_s, finish_s, n_tokens))
    if not len(a) == len(f) == len(e) == len(n) or len(a) == 0:
        raise ValueError("arrival_s, first_token_s, finish_s and n_tokens must be non-empty and of one length")
    if np.any(f < a) or np.any(e < f):
        raise ValueError("a request's first token precedes its arrival, or its finish precedes its first token")
    ttft = (f - a) * 1e3
    many = n >= 2
    tpot = (e[many] - f[many]) / (n[many] - 1) * 1e3 if many.any() else np.array([np.nan])
    return {"ttft_ms_p50": float(np.percentile(ttft, 50)), "ttft_ms_p99": float(np.percentile(ttft, 99)),
            "tpot_ms_p50": float(np.percentile(tpot, 50)), "tpot_ms_p99": float(np.percentile(tpot, 99))}


@dataclass(frozen=True)
class LoadRun:
    arrival_s: list
    first_token_s: list
    finish_s: list
    n_tokens: list
    decode_steps: int
    mean_batch: float
    wall_s: float
    tokens: list          # generated token ids per request (greedy)


def run_load(model: dict, cache: PagedKVCache, arrivals, prompts: list, out_lens: list, max_batch: int,
             sync=lambda: None, clock=None) -> LoadRun:
    """Serve the requests (``prompts[i]`` [T_i] arriving at ``arrivals[i]`` s, wanting ``out_lens[i]`` tokens)
    with continuous batching. Time is the wall clock, except that idle gaps (nothing running, next arrival in the
    future) are skipped instead of slept. ``clock`` (a function returning seconds) may be replaced in tests."""
    import time
    n = len(arrivals)
    if not n == len(prompts) == len(out_lens) or min(out_lens) < 1 or max_batch < 1:
        raise ValueError("arrivals, prompts and out_lens must have one length, out_lens ≥ 1, max_batch ≥ 1")
    clock = clock or time.perf_counter
    t0, skipped = clock(), 0.0
    now = lambda: clock() - t0 + skipped                                               # noqa: E731
    first, finish, toks = [0.0] * n, [0.0] * n, [[] for _ in range(n)]
    order = deque(sorted(range(n), key=lambda i: arrivals[i]))
    waiting: deque = deque()
    active: list[int] = []
    steps, batch_sum = 0, 0
    while order or waiting or active:
        t = now()
        while order and arrivals[order[0]] <= t:
            waiting.append(order.popleft())
        if not active and not waiting:
            skipped += arrivals[order[0]] - t                                          # idle: jump to the arrival
            continue
        # admit while a slot is free and the free blocks cover every running sequence's remaining growth too
        # (blocks are still taken lazily, one at a time; admission control only prevents running out mid-way)
        owed = sum(cache.blocks_needed(len(prompts[i]) + out_lens[i]) - len(cache.tables[i]) for i in active)
        while waiting and len(active) < max_batch and len(cache.free) - owed >= \
                cache.blocks_needed(len(prompts[waiting[0]]) + out_lens[waiting[0]]):
            i = waiting.popleft()
            tok = int(prefill_paged(model, cache, i, prompts[i]).argmax())
            first[i] = now()
            toks[i].append(tok)
            if out_lens[i] == 1:
                finish[i] = first[i]
                cache.release(i)
            else:
                active.append(i)
                owed += cache.blocks_needed(len(prompts[i]) + out_lens[i]) - len(cache.tables[i])
        if not active:
            if waiting and not cache.tables:
                raise RuntimeError(f"request {waiting[0]} needs more KV blocks than the whole cache has: "
                                   "give the cache more blocks or shorten prompts/outputs")
            continue
        last = torch.tensor([toks[i][-1] for i in active], device=prompts[0].device)
        nxt = decode_paged(model, cache, active, last).argmax(-1).tolist()          # .tolist() synchronises
        sync()
        t = now()
        steps, batch_sum = steps + 1, batch_sum + len(active)
        for i, tok in zip(list(active), nxt):
            toks[i].append(tok)
            if len(toks[i]) == out_lens[i]:
                finish[i] = t
                active.remove(i)
                cache.release(i)
    return LoadRun(list(map(float, arrivals)), first, finish, [len(x) for x in toks], steps,
                   batch_sum / max(steps, 1), now(), toks)
