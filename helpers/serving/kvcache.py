"""KV-cache size and a PagedAttention-style block allocator against contiguous allocation (chapter 19).

Every generated token stores a key and a value vector per layer and KV head:

    bytes per token = 2 · n_layers · n_kv_heads · head_dim · bytes_per_element

:func:`check_published` recomputes the figures a paper states (data/kv_published.csv, one source per row).
:class:`PagedAllocator` hands out fixed-size blocks of ``block_tokens`` slots on demand, as vLLM does (Kwon et al.
2023); :func:`fragmentation` replays the same requests through it and through a contiguous allocator that reserves
each request's maximum length up front, and reports the reserved-but-unused share of the cache.
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
                  seed: int = 0) -> list[Fragmentation]:
    """Admit requests (prompt + output lengths drawn uniformly up to ``max_len``) until the cache is full, once
    reserving ``max_len`` per request contiguously and once paging; compare at the moment the cache is full."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(16, max_len + 1, size=n_requests)
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
