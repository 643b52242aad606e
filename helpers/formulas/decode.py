"""Bytes an autoregressive decode step must read from memory, and the throughput bound they set (chapters 19, 21).

One decode step produces one token for each of the B sequences of a batch. It must read, at least once:

* every weight matrix the step multiplies by — all layers and the LM head (the input embedding table is *not*
  read whole: only the B rows of the current tokens are gathered);
* the keys and values of every token already in each sequence's context, in every layer and KV head:
  2 · n_layers · n_kv_heads · head_dim · bytes_per_element · Σ context lengths.

A step therefore takes at least ``bytes_per_step / bandwidth`` seconds and the batch produces at most

    hbm_bound_tokens_per_s = B · bandwidth / bytes_per_step

tokens per second (the "memory wall" of decoding; e.g. Pope et al. 2022, arXiv:2211.05102 §2, and the vLLM paper,
Kwon et al. 2023, §2.2). Activations, the scores and the output writes are small beside these and not counted, so
the bound is optimistic: a measured rate is a fraction of it. Units: bytes, GB/s = 10^9 B/s, tokens/s.
"""
from __future__ import annotations


def kv_read_bytes(n_layers: int, n_kv_heads: int, head_dim: int, context_tokens: int,
                  bytes_per_elem: float = 2) -> float:
    """Keys and values read by one decode step: 2 (K and V) · layers · KV heads · head_dim · bytes · Σ contexts
    (``context_tokens`` is the sum of the context lengths over the batch)."""
    if min(n_layers, n_kv_heads, head_dim) < 1 or context_tokens < 0 or bytes_per_elem <= 0:
        raise ValueError(f"n_layers={n_layers}, n_kv_heads={n_kv_heads}, head_dim={head_dim} must be ≥ 1, "
                         f"context_tokens={context_tokens} ≥ 0 and bytes_per_elem={bytes_per_elem} > 0")
    return 2.0 * n_layers * n_kv_heads * head_dim * bytes_per_elem * context_tokens


def decode_bytes_per_step(weight_bytes_read: float, n_layers: int, n_kv_heads: int, head_dim: int,
                          context_tokens: int, bytes_per_elem: float = 2) -> float:
    """Weights read once per step (layers + LM head + the gathered embedding rows) plus the KV cache read."""
    if weight_bytes_read <= 0:
        raise ValueError(f"weight_bytes_read={weight_bytes_read}: must be > 0 (bytes of the weights a step reads)")
    return weight_bytes_read + kv_read_bytes(n_layers, n_kv_heads, head_dim, context_tokens, bytes_per_elem)


def hbm_bound_tokens_per_s(batch: int, bytes_per_step: float, bw_GBps: float) -> float:
    """The most tokens/s a memory-bound decode can give: B tokens every ``bytes_per_step / bandwidth`` seconds."""
    if batch < 1 or bytes_per_step <= 0 or bw_GBps <= 0:
        raise ValueError(f"batch={batch} ≥ 1, bytes_per_step={bytes_per_step} > 0 and bw_GBps={bw_GBps} > 0 needed")
    return batch * bw_GBps * 1e9 / bytes_per_step
