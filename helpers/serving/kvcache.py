"""KV-cache size and a PagedAttention-style block allocator against contiguous allocation (chapter 19).

Every generated token stores a key and a value vector per layer and KV head:

    bytes per token = 2 · n_layers · n_kv_heads · head_dim · bytes_per_element

:func:`check_published` recomputes the figures a paper states (data/kv_published.csv, one source per row).
:class:`PagedAllocator` hands out fixed-size blocks of ``block_tokens`` slots on demand, as vLLM does (Kwon et al.
2023); :func:`fragmentation` replays the same requests through it and through a contiguous allocator that reserves
each request's maximum length up front, and reports the reserved-but-unused share of the cache.
:data:`LENGTH_DISTRIBUTIONS` holds request lengths from published workloads (ShareGPT and Alpaca as the vLLM paper
measured them; a long-context one) and :func:`token_share` predicts the share of reserved KV memory that holds
tokens under each allocation scheme; :func:`check_vllm_fig2` compares it with the vLLM paper's Fig. 2.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data" / "kv_published.csv"


def kv_bytes_per_token(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_elem: float = 2) -> float:
    if min(n_layers, n_kv_heads, head_dim) < 1 or bytes_per_elem <= 0:
        raise ValueError(f"n_layers={n_layers}, n_kv_heads={n_kv_heads}, head_dim={head_dim} must be ≥ 1 and "
                         f"bytes_per_elem={bytes_per_elem} > 0")
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_elem


def kv_bytes(n_layers, n_kv_heads, head_dim, tokens: int, batch: int = 1, bytes_per_elem: float = 2) -> float:
    return kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_elem) * tokens * batch


def published() -> list[dict]:
    with open(DATA, newline="") as f:
        return list(csv.DictReader(r for r in f if not r.startswith("#")))


def check_published() -> list[dict]:
    """Each published figure beside the formula's value for the model's shape."""
    out = []
    for r in published():
        calc = kv_bytes(int(r["n_layers"]), int(r["n_kv_heads"]), int(r["head_dim"]), int(r["tokens"]),
                        1, float(r["bytes_per_elem"]))
        out.append({"model": r["model"], "tokens": int(r["tokens"]), "published": r["published"],
                    "published_bytes": float(r["published_bytes"]), "formula_bytes": calc,
                    "ratio": calc / float(r["published_bytes"]), "source": r["source"]})
    return out


class PagedAllocator:
    """Blocks of ``block_tokens`` KV slots; a request's block table grows one block at a time."""

    def __init__(self, n_blocks: int, block_tokens: int = 16):
        if n_blocks < 1 or block_tokens < 1:
            raise ValueError(f"n_blocks={n_blocks} and block_tokens={block_tokens} must be ≥ 1")
        self.block_tokens = block_tokens
        self.free = list(range(n_blocks - 1, -1, -1))
        self.tables: dict[int, list[int]] = {}
        self.lengths: dict[int, int] = {}

    def append(self, req: int, n: int = 1) -> bool:
        """Add ``n`` tokens to request ``req``; False (and nothing changed) if the blocks ran out."""
        have = len(self.tables.get(req, [])) * self.block_tokens
        need = math.ceil(max(0, self.lengths.get(req, 0) + n - have) / self.block_tokens)
        if need > len(self.free):
            return False
        self.tables.setdefault(req, []).extend(self.free.pop() for _ in range(need))
        self.lengths[req] = self.lengths.get(req, 0) + n
        return True

    def release(self, req: int) -> None:
        self.free.extend(self.tables.pop(req, []))
        self.lengths.pop(req, None)

    def used_slots(self) -> int:
        return sum(self.lengths.values())

    def reserved_slots(self) -> int:
        return sum(len(t) for t in self.tables.values()) * self.block_tokens


@dataclass(frozen=True)
class Fragmentation:
    scheme: str
    requests_admitted: int
    used_slots: int
    reserved_slots: int
    waste_frac: float            # reserved but not holding a token


def fragmentation(capacity_tokens: int = 8192, max_len: int = 1024, block_tokens: int = 16, n_requests: int = 64,
                  seed: int = 0, lengths: str = "sharegpt") -> list[Fragmentation]:
    """Admit requests until the cache is full, once reserving ``max_len`` per request contiguously and once paging;
    compare at the moment the cache is full. ``lengths``: a name in :data:`LENGTH_DISTRIBUTIONS` (final prompt +
    output lengths, capped at ``max_len``) or "uniform" (16 … ``max_len``, the toy of chapter 19's first lab)."""
    rng = np.random.default_rng(seed)
    if lengths == "uniform":
        lengths = rng.integers(16, max_len + 1, size=n_requests)
    else:
        p, o = sample_lengths(lengths, n_requests, max_len, seed)
        lengths = p + o
    # contiguous: each admitted request reserves max_len slots
    n_contig = min(n_requests, capacity_tokens // max_len)
    used_c = int(lengths[:n_contig].sum())
    res_c = n_contig * max_len
    # paged: blocks on demand, admit while blocks last
    pa = PagedAllocator(capacity_tokens // block_tokens, block_tokens)
    n_paged = 0
    for i, n in enumerate(lengths):
        if not pa.append(i, int(n)):
            break
        n_paged += 1
    return [Fragmentation("contiguous (reserve max_len)", n_contig, used_c, res_c, 1 - used_c / res_c),
            Fragmentation(f"paged ({block_tokens}-token blocks)", n_paged, pa.used_slots(), pa.reserved_slots(),
                          1 - pa.used_slots() / pa.reserved_slots())]


# Request lengths (tokens). The means are published; the shape is an assumption: exponential (the vLLM paper's
# Fig. 11 histograms are right-skewed with a spike near 0 and a long tail), capped so prompt + output ≤ max_len.
LENGTH_DISTRIBUTIONS = {
    "sharegpt": {"mean_in": 161.31, "mean_out": 337.99,
                 "source": "Kwon et al. 2023 (vLLM, arXiv 2309.06180) §6.1, Fig. 11a legend: input mean 161.31, "
                           "output mean 337.99 tokens"},
    "alpaca": {"mean_in": 19.31, "mean_out": 58.45,
               "source": "Kwon et al. 2023 (vLLM, arXiv 2309.06180) §6.1, Fig. 11b legend: input mean 19.31, "
                         "output mean 58.45 tokens"},
    "longbench-en": {"mean_in": 6711 * 1.3, "mean_out": 128.0,
                     "source": "Bai et al. 2023 (LongBench, arXiv 2308.14508): English tasks average 6,711 words; "
                               "1.3 tokens per word and a 128-token mean answer are assumptions"},
}


def sample_lengths(name: str, n: int, max_len: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(prompt, output) token counts of ``n`` requests from ``LENGTH_DISTRIBUTIONS[name]``, each ≥ 1 and
    prompt + output ≤ ``max_len`` (prompts cut to max_len − 1, outputs to what is left)."""
    if name not in LENGTH_DISTRIBUTIONS:
        raise ValueError(f"lengths={name!r}: use 'uniform' or one of {sorted(LENGTH_DISTRIBUTIONS)}")
    d, rng = LENGTH_DISTRIBUTIONS[name], np.random.default_rng(seed)
    p = np.clip(np.ceil(rng.exponential(d["mean_in"], n)), 1, max_len - 1).astype(int)
    o = np.clip(np.ceil(rng.exponential(d["mean_out"], n)), 1, max_len - p).astype(int)
    return p, o


@dataclass(frozen=True)
class TokenShare:
    scheme: str
    token_share: float           # slots holding a token ÷ slots reserved, averaged over requests in flight
    published: float | None      # the vLLM paper's Fig. 2 share for the same scheme
    error: float | None          # predicted ÷ published − 1
    published_no_external: float | None = None   # Fig. 2's share with "external frag. & others" left out
    error_no_external: float | None = None


# Kwon et al. 2023 Fig. 2 (experiment of §6.2): % of KV cache memory holding token states, reservation, internal
# fragmentation, external fragmentation & others, as printed on the bars (vLLM: 96.3 % tokens, the rest unlabelled).
VLLM_FIG2 = {"reserve max_len (Orca Max)": (20.4, 13.3, 57.3, 8.9),
             "reserve next power of 2 (Orca Pow2)": (26.8, 17.9, 13.6, 41.6),
             "reserve final length (Orca Oracle)": (38.2, 25.2, 0.0, 36.6),
             "paged blocks (vLLM)": (96.3, 0.0, 3.7, 0.0)}


def token_share(lengths: str = "sharegpt", max_len: int = 2048, block_tokens: int = 16, n: int = 20_000,
                seed: int = 0) -> list[TokenShare]:
    """Each request seen at a uniform random point of its decoding (prompt + a uniform share of its output held):
    the share of reserved slots that hold tokens when each request reserves ``max_len`` (Orca Max), the next
    power of two of its final length (Pow2), exactly its final length (Oracle), or 16-token blocks on demand
    (vLLM). External fragmentation between contiguous chunks is not modelled, so the contiguous shares are upper
    bounds."""
    p, o = sample_lengths(lengths, n, max_len, seed)
    u = np.random.default_rng(seed + 1).random(n)
    held = p + np.maximum(1, np.ceil(u * o))
    final = p + o
    reserved = {"reserve max_len (Orca Max)": np.full(n, max_len),
                "reserve next power of 2 (Orca Pow2)": 2 ** np.ceil(np.log2(final)),
                "reserve final length (Orca Oracle)": final,
                "paged blocks (vLLM)": np.ceil(held / block_tokens) * block_tokens}
    out = []
    for scheme, r in reserved.items():
        share = float(held.sum() / r.sum())
        if lengths == "sharegpt" and max_len == 2048:
            tok, res, internal, ext = VLLM_FIG2[scheme]
            pub, pub_ne = tok / 100, tok / (tok + res + internal)
            out.append(TokenShare(scheme, share, pub, share / pub - 1, pub_ne, share / pub_ne - 1))
        else:
            out.append(TokenShare(scheme, share, None, None))
    return out


def check_vllm_fig2(seed: int = 0) -> list[TokenShare]:
    """The vLLM paper's Fig. 2 shares predicted from ShareGPT's published mean lengths (not fitted to Fig. 2)."""
    return token_share("sharegpt", 2048, 16, seed=seed)
