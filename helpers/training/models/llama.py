"""A Llama-style decoder for training at real scale (chapter 18): RMSNorm, RoPE, grouped-query attention, SwiGLU.

The block is Llama's (Touvron et al. 2023, arXiv:2302.13971 §2.2; GQA from Ainslie et al. 2023, arXiv:2305.13245):

    h = x + Wo · attention(RoPE(Wq·n), RoPE(Wk·n), Wv·n)     n = RMSNorm(x)
    y = h + W2 · (silu(W1·m) ⊙ W3·m)                         m = RMSNorm(h)

``n_kv_heads < n_heads`` query heads share a key/value head (GQA): query head i reads KV head i // (H/Hkv).
Attention is ``torch.nn.functional.scaled_dot_product_attention`` (causal), so the same code runs the flash,
cuDNN, memory-efficient or math backend. The weights are random (normal, std 0.02).

Named configs run from ``tiny`` (a byte-level model for the CPU) to ``llama-3b``. FLOPs per token for MFU are
6·N + the causal attention term (PaLM, Chowdhery et al. 2022, App. B; ``helpers.formulas.flops``), with N the
parameters that take part in a matrix multiply: every one but the input embedding table, which is a lookup
(the LM head is a matmul and counts; torchtitan counts the same way).

    from helpers.training.models import llama
    model = llama.build("tiny", device="cpu")
    loss = model(tokens[:, :-1], tokens[:, 1:])
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.formulas import flops


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int                       # SwiGLU hidden width
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    tie_embeddings: bool = False

    def __post_init__(self):
        if self.d_model % self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError(f"{self}: d_model must divide by n_heads and n_heads by n_kv_heads")
        if (self.d_model // self.n_heads) % 2:
            raise ValueError(f"head_dim={self.d_model // self.n_heads}: RoPE needs an even head dimension")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


CONFIGS = {
    "tiny": LlamaConfig(vocab_size=256, d_model=128, n_layers=4, n_heads=4, n_kv_heads=2, d_ff=384),
    "llama-125m": LlamaConfig(32000, 768, 12, 12, 4, 2048),
    "llama-350m": LlamaConfig(32000, 1024, 24, 16, 8, 2816),
    "llama-1b": LlamaConfig(32000, 2048, 18, 16, 8, 5632),      # 0.98 B (0.92 B without the embedding table)
    "llama-3b": LlamaConfig(32000, 3072, 28, 24, 8, 8192),      # Llama 3.2 3B's shapes with a 32k vocabulary
}


def config(name: str | LlamaConfig) -> LlamaConfig:
    if isinstance(name, LlamaConfig):
        return name
    if name not in CONFIGS:
        raise ValueError(f"config {name!r}: use one of {', '.join(CONFIGS)}")
    return CONFIGS[name]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()                                        # the statistics in fp32, whatever x is
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(head_dim: int, seq_len: int, theta: float = 10000.0, device=None):
    """cos and sin of the rotation angles t·θ^(-2i/d), shape (seq_len, head_dim), in fp32."""
    inv = theta ** (-torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim)
    ang = torch.outer(torch.arange(seq_len, device=device, dtype=torch.float32), inv)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def apply_rope(x, cos, sin):
    """Rotate each pair (x_i, x_{i+d/2}) of x (..., T, d) by its position's angle."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos.to(x.dtype) + torch.cat([-x2, x1], dim=-1) * sin.to(x.dtype)


def repeat_kv(x, groups: int):
    """(B, Hkv, T, d) → (B, Hkv·groups, T, d): KV head j serves query heads j·groups to j·groups + groups − 1."""
    if groups == 1:
        return x
    B, H, T, d = x.shape
    return x[:, :, None].expand(B, H, groups, T, d).reshape(B, H * groups, T, d)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.h, self.hkv, self.hd = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.wqkv = nn.Linear(cfg.d_model, (self.h + 2 * self.hkv) * self.hd, bias=False)   # Q, K, V: one GEMM
        self.wo = nn.Linear(self.h * self.hd, cfg.d_model, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q, k, v = self.wqkv(x).split([self.h * self.hd, self.hkv * self.hd, self.hkv * self.hd], dim=-1)
        q = q.view(B, T, self.h, self.hd).transpose(1, 2)            # (B, H, T, hd)
        k = k.view(B, T, self.hkv, self.hd).transpose(1, 2)          # (B, Hkv, T, hd)
        v = v.view(B, T, self.hkv, self.hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        g = self.h // self.hkv
        y = F.scaled_dot_product_attention(q, repeat_kv(k, g), repeat_kv(v, g), is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, self.h * self.hd))


class SwiGLU(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.w13 = nn.Linear(cfg.d_model, 2 * cfg.d_ff, bias=False)      # gate W1 and up W3: one GEMM
        self.w2 = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x):
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(cfg.d_model, cfg.norm_eps), Attention(cfg)
        self.mlp_norm, self.mlp = RMSNorm(cfg.d_model, cfg.norm_eps), SwiGLU(cfg)

    def forward(self, x, cos, sin):
        h = x + self.attn(self.attn_norm(x), cos, sin)
        return h + self.mlp(self.mlp_norm(h))


class Llama(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.embed.weight

    def forward(self, idx, targets=None):
        """Logits (B, T, vocab), or the mean cross-entropy when ``targets`` (B, T) are given."""
        cos, sin = rope_tables(self.cfg.head_dim, idx.shape[1], self.cfg.rope_theta, idx.device)
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(x) if targets is None else self.head_loss(x, targets)

    def head(self, x):
        return self.lm_head(self.norm(x))

    def head_loss(self, x, targets):
        return F.cross_entropy(self.head(x).float().flatten(0, 1), targets.flatten())


def build(name: str | LlamaConfig, device=None, seed: int = 0) -> Llama:
    """The model with seeded normal(0, 0.02) weights, created directly on ``device``; the output projections
    (Wo, W2) scaled by 1/√(2L) as in GPT-2, RMSNorm weights 1."""
    cfg = config(name)
    torch.manual_seed(seed)
    with torch.device(device or "cpu"):
        model = Llama(cfg)
    for n, p in model.named_parameters():
        if p.dim() == 2:
            std = 0.02 / (2 * cfg.n_layers) ** 0.5 if n.endswith(("wo.weight", "w2.weight")) else 0.02
            nn.init.normal_(p, 0.0, std)
    return model


def count_params(cfg: str | LlamaConfig) -> dict:
    """Parameters by hand from the shapes: ``total`` and ``non_embedding`` (all but the input embedding table;
    with tied embeddings the shared matrix is the LM head's and counts)."""
    c = config(cfg)
    attn = c.d_model * (c.n_heads + 2 * c.n_kv_heads) * c.head_dim + c.n_heads * c.head_dim * c.d_model
    per_layer = attn + 3 * c.d_model * c.d_ff + 2 * c.d_model                  # + two RMSNorm weights
    body = c.n_layers * per_layer + c.d_model                                   # + the final RMSNorm
    table = c.vocab_size * c.d_model
    total = body + table * (1 if c.tie_embeddings else 2)
    return {"total": total, "non_embedding": total - (0 if c.tie_embeddings else table)}


def flops_per_token(cfg: str | LlamaConfig, seq_len: int, causal: bool = True) -> int:
    """Training FLOPs per token: 6·N (N = non-embedding parameters) + 12·L·T·d_attn, halved for causal attention
    (``causal=False``: PaLM's count, which most published MFUs use)."""
    c = config(cfg)
    return flops.training_flops_per_token(count_params(c)["non_embedding"], c.n_layers, seq_len,
                                          c.n_heads * c.head_dim, form="palm", causal=causal)
