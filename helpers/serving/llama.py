"""A compact, inference-only Llama-style decoder for timing decode and prefill (chapter 19).

RMSNorm, rotary position embeddings (RoPE), grouped-query attention (GQA: ``n_heads`` query heads share
``n_kv_heads`` key/value heads) and a SwiGLU MLP, as in Llama 3 (Grattafiori et al. 2024, arXiv:2407.21783 Table 3).
Q, K and V are one fused matrix and so are the MLP's gate and up projections, so a decode step is few, large
matrix-vector products. **The weights are random** (normal, std 0.02): the speed of a step depends on the shapes,
not the values, so this is fine for tokens/s and meaningless for answers.

Two attention paths share the weights:

* :func:`decode_step` — one token per sequence against a contiguous, preallocated KV cache
  ``k, v: [n_layers, B, n_kv_heads, max_ctx, head_dim]``. The new K/V are written in place with ``index_copy_`` at
  the position held in a *device* tensor, and positions past it are masked, so every shape is static and the step
  can be captured once in a CUDA graph and replayed (``helpers.serving.llmdecode``).
* :func:`prefill` — a whole prompt at once (causal attention), filling the cache; only the last position goes
  through the LM head.

The attention of a decode step groups the query heads by their KV head (``q: [B, Hkv, G, d]``) so each K and V
is read once and never copied per query head.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class LlamaConfig:
    name: str
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    vocab: int
    tied_embeddings: bool = False
    rope_theta: float = 500_000.0

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def layer_params(self) -> int:
        d, hd = self.d_model, self.head_dim
        attn = d * (self.n_heads + 2 * self.n_kv_heads) * hd + self.n_heads * hd * d
        return attn + 3 * d * self.d_ff + 2 * d                   # + two RMSNorm gains

    def params(self) -> int:
        """All parameters: embedding table, layers, final norm, LM head (absent when tied to the embeddings)."""
        emb = self.vocab * self.d_model
        return emb + self.n_layers * self.layer_params() + self.d_model + (0 if self.tied_embeddings else emb)

    def matmul_params(self) -> int:
        """Parameters a token multiplies by: layers + LM head (the embedding lookup is a gather, no FLOPs)."""
        return self.n_layers * self.layer_params() + self.d_model + self.vocab * self.d_model

    def weight_bytes_read(self, batch: int, bytes_per_elem: int = 2) -> float:
        """Weight bytes one decode step reads: layers, final norm, LM head, and the ``batch`` embedding rows."""
        return float(bytes_per_elem * (self.matmul_params() + batch * self.d_model))


CONFIGS = {
    # Llama 3 8B (arXiv:2407.21783 Table 3; Meta-Llama-3-8B config.json): untied LM head
    "llama3-8b": LlamaConfig("llama3-8b", 4096, 32, 32, 8, 14336, 128256),
    # Llama 3.2 1B shapes (meta-llama/Llama-3.2-1B config.json): tied embeddings
    "llama3-1b": LlamaConfig("llama3-1b", 2048, 16, 32, 8, 8192, 128256, tied_embeddings=True),
    # a toy for the CPU and the tests: same code, Llama's proportions shrunk
    "tiny": LlamaConfig("tiny", 64, 2, 4, 2, 128, 256, rope_theta=10_000.0),
}


def config(name: str) -> LlamaConfig:
    if name not in CONFIGS:
        raise ValueError(f"model={name!r}: use one of {sorted(CONFIGS)}")
    return CONFIGS[name]


def build(cfg: LlamaConfig, device="cpu", dtype=torch.bfloat16, seed: int = 0) -> dict:
    """Random weights (std 0.02, norms at 1) as a dict of tensors, created directly on ``device``."""
    g = torch.Generator(device=device).manual_seed(seed)
    d, hd = cfg.d_model, cfg.head_dim

    def w(*shape):
        return torch.empty(*shape, device=device, dtype=dtype).normal_(0.0, 0.02, generator=g)
    layers = [{"attn_norm": torch.ones(d, device=device, dtype=dtype),
               "wqkv": w((cfg.n_heads + 2 * cfg.n_kv_heads) * hd, d), "wo": w(d, cfg.n_heads * hd),
               "mlp_norm": torch.ones(d, device=device, dtype=dtype),
               "w13": w(2 * cfg.d_ff, d), "w2": w(d, cfg.d_ff)} for _ in range(cfg.n_layers)]
    emb = w(cfg.vocab, d)
    return {"cfg": cfg, "embed": emb, "layers": layers, "norm": torch.ones(d, device=device, dtype=dtype),
            "lm_head": emb if cfg.tied_embeddings else w(cfg.vocab, d), "rope": rope_table(cfg, 1 << 16, device)}


def count_params(model: dict) -> int:
    ts = [model["embed"], model["norm"]] + [t for layer in model["layers"] for t in layer.values()]
    if model["lm_head"] is not model["embed"]:
        ts.append(model["lm_head"])
    return sum(t.numel() for t in ts)


def rope_table(cfg: LlamaConfig, max_pos: int, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of position · θ^(-2i/d), each [max_pos, d] (the d/2 angles written twice, for rotate-half)."""
    inv = 1.0 / cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, device=device, dtype=torch.float32) / cfg.head_dim)
    ang = torch.outer(torch.arange(max_pos, device=device, dtype=torch.float32), inv).repeat(1, 2)
    return ang.cos(), ang.sin()


def rms_norm(x: torch.Tensor, gain: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """x / rms(x) · gain, computed in fp32 by ``F.rms_norm`` for bf16 inputs."""
    return F.rms_norm(x, (x.shape[-1],), gain, eps)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (x_i, x_{i+d/2}) by the position's angles: x·cos + rotate_half(x)·sin (fp32, back to x's
    dtype); ``cos``/``sin`` [.., d] broadcast against x."""
    h = x.shape[-1] // 2
    return torch.addcmul(x * cos, torch.cat([-x[..., h:], x[..., :h]], -1), sin).to(x.dtype)


def new_cache(cfg: LlamaConfig, batch: int, max_ctx: int, device="cpu", dtype=torch.bfloat16):
    """Contiguous static KV cache: K and V, each [n_layers, B, n_kv_heads, max_ctx, head_dim], zeroed."""
    shape = (cfg.n_layers, batch, cfg.n_kv_heads, max_ctx, cfg.head_dim)
    return torch.zeros(shape, device=device, dtype=dtype), torch.zeros(shape, device=device, dtype=dtype)


def attn_in(x, norm, wqkv, cos, sin, n_heads: int, n_kv_heads: int):
    """RMSNorm, the fused QKV projection and RoPE: q [B, H, T, d], k and v [B, Hkv, T, d]."""
    B, T, _ = x.shape
    hd = wqkv.shape[0] // (n_heads + 2 * n_kv_heads)
    q, k, v = F.linear(rms_norm(x, norm), wqkv).split([n_heads * hd, n_kv_heads * hd, n_kv_heads * hd], -1)
    q, k = q.view(B, T, n_heads, hd).transpose(1, 2), k.view(B, T, n_kv_heads, hd).transpose(1, 2)
    return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v.view(B, T, n_kv_heads, hd).transpose(1, 2)


def out_mlp(o, x, wo, mlp_norm, w13, w2):
    """Attention output projection + residual, then RMSNorm, SwiGLU MLP + residual. o [B, H, T, d]."""
    B, T = x.shape[0], x.shape[1]
    x = x + F.linear(o.transpose(1, 2).reshape(B, T, -1), wo)
    gate, up = F.linear(rms_norm(x, mlp_norm), w13).chunk(2, -1)
    return x + F.linear(F.silu(gate) * up, w2)


def grouped_attention(q, k, v, valid):
    """q [B, H, 1, d] against k, v [B, Hkv, T, d]; ``valid`` [B or 1, T] bool. Query heads are grouped by KV head
    (no copy of K/V per query head); softmax in fp32."""
    B, H, _, d = q.shape
    hkv, T = k.shape[1], k.shape[2]
    qg = q.view(B, hkv, H // hkv, d)
    s = torch.matmul(qg, k.transpose(-1, -2)).float() * (1.0 / math.sqrt(d))       # [B, Hkv, G, T]
    s = s.masked_fill(~valid.view(valid.shape[0], 1, 1, T), float("-inf"))
    o = torch.matmul(s.softmax(-1).to(v.dtype), v)                                    # [B, Hkv, G, d]
    return o.reshape(B, H, 1, d)


def full_cache_attention(q, k, v, valid=None):
    """Attention over the *whole* cache with ``F.scaled_dot_product_attention(enable_gqa=True)`` (FlashAttention on
    a GPU: K/V read once, no copy per query head). ``valid`` is ignored: correct only when every cache slot holds a
    token — the timing case, position = max_ctx − 1. A server passes per-sequence lengths to a kernel that takes
    them (FlashAttention's ``flash_attn_with_kvcache(cache_seqlens=…)``)."""
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


EAGER = (attn_in, grouped_attention, out_mlp)


def compiled_ops() -> tuple:
    """The three per-layer pieces of a decode step, each compiled by ``torch.compile`` (its elementwise ops —
    norms, RoPE, masking, SwiGLU — fused into a few kernels). The KV-cache writes stay outside, eager, so no
    compiled graph ever mutates its inputs. Compiled once, reused by every layer (same shapes); a new batch
    size or context recompiles once, then dynamo marks the dimension dynamic."""
    return tuple(torch.compile(f) for f in EAGER)


def decode_step(model: dict, tokens: torch.Tensor, pos: torch.Tensor, k_cache, v_cache, ops=EAGER) -> torch.Tensor:
    """One decode step for B sequences all at position ``pos`` (a 1-element device tensor, int64): writes the new
    K/V into the caches in place at ``pos``, attends to positions ≤ pos, returns logits [B, vocab] (fp32).
    Static shapes and no host synchronisation: capturable in a CUDA graph. ``ops``: :data:`EAGER` or
    :func:`compiled_ops`."""
    cfg = model["cfg"]
    first, attend, last = ops
    B = tokens.shape[0]
    x = model["embed"].index_select(0, tokens).view(B, 1, cfg.d_model)
    cos, sin = (t.index_select(0, pos).view(1, 1, 1, -1) for t in model["rope"])
    valid = (torch.arange(k_cache.shape[3], device=tokens.device) <= pos).view(1, -1)
    for i, ly in enumerate(model["layers"]):
        q, k, v = first(x, ly["attn_norm"], ly["wqkv"], cos, sin, cfg.n_heads, cfg.n_kv_heads)
        k_cache[i].index_copy_(2, pos, k)
        v_cache[i].index_copy_(2, pos, v)
        x = last(attend(q, k_cache[i], v_cache[i], valid), x, ly["wo"], ly["mlp_norm"], ly["w13"], ly["w2"])
    return F.linear(rms_norm(x[:, 0], model["norm"]), model["lm_head"]).float()


def prefill(model: dict, prompt: torch.Tensor, k_cache=None, v_cache=None):
    """Run prompts [B, T] from position 0 (causal attention), writing their K/V into the contiguous caches at
    positions 0..T-1 when given (the paged cache stores the returned per-layer K/V instead). Returns (logits of
    the last position [B, vocab] fp32, [(k, v) per layer], each [B, Hkv, T, d])."""
    cfg = model["cfg"]
    B, T = prompt.shape
    x = model["embed"][prompt]
    cos, sin = (t[:T].view(1, 1, T, -1) for t in model["rope"])
    kvs = []
    rep = cfg.n_heads // cfg.n_kv_heads
    for i, ly in enumerate(model["layers"]):
        q, k, v = attn_in(x, ly["attn_norm"], ly["wqkv"], cos, sin, cfg.n_heads, cfg.n_kv_heads)
        kvs.append((k, v))
        if k_cache is not None:
            k_cache[i, :, :, :T] = k
            v_cache[i, :, :, :T] = v
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), is_causal=True)
        x = out_mlp(o, x, ly["wo"], ly["mlp_norm"], ly["w13"], ly["w2"])
    return F.linear(rms_norm(x[:, -1], model["norm"]), model["lm_head"]).float(), kvs
