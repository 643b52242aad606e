"""Tiny, seeded models for the distributed-training chapters (06 frameworks, 07 parallelism, 09 memory).

Two models, small enough to train for a few steps on a 2-core CPU in well under a second:

* :class:`TinyMLP` — a stack of ``Linear → GELU`` layers (regression on a fixed random "teacher"); the model
  of the data-parallel, FSDP and pipeline labs.
* :class:`TinyGPT` — a two-layer GPT-style decoder (token + position embedding, pre-LayerNorm blocks with
  causal self-attention and a 4h MLP, final LayerNorm, LM head), trained to continue arithmetic sequences.

:class:`Block` is written the way Korthikanti et al. (arXiv 2205.05198, §4.1) count activation memory:
QKV projection, ``QKᵀ``, softmax, dropout on the attention probabilities, attention over V, output projection,
dropout, then LayerNorm → 4h MLP with GELU → dropout. Chapter 09 measures it against sbh(34 + 5as/h).
Every parameter lives in a sub-module (none on the root), so FSDP can shard the model module by module.

    from helpers.training.models import tiny
    model = tiny.build("gpt", seed=0)              # same weights on every rank
    x, y = tiny.make_batch("gpt", 8, seed=1)      # inputs, targets
    loss = tiny.loss_fn("gpt")(model(x), y)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
import torch.nn as nn
import torch.nn.functional as F

KINDS = ("mlp", "gpt")


@dataclass(frozen=True)
class MLPConfig:
    d_in: int = 16
    d_hidden: int = 64
    d_out: int = 8
    n_layers: int = 4           # Linear layers; every boundary between two of them has width d_hidden

    def __post_init__(self):
        if min(self.d_in, self.d_hidden, self.d_out) < 1 or self.n_layers < 2:
            raise ValueError(f"{self}: need positive widths and n_layers >= 2")


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int = 64
    seq_len: int = 16
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    dropout: float = 0.0        # 0 for the equality checks; chapter 09's memory block uses 0.1

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}: "
                             "pick n_heads among the divisors of d_model")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout}: use a probability in [0, 1)")


# ------------------------------------------------------------------ the MLP

class TinyMLP(nn.Module):
    def __init__(self, cfg: MLPConfig = MLPConfig()):
        super().__init__()
        self.cfg = cfg
        widths = [cfg.d_in] + [cfg.d_hidden] * (cfg.n_layers - 1) + [cfg.d_out]
        layers = []
        for i in range(cfg.n_layers):
            lin = nn.Linear(widths[i], widths[i + 1])
            layers.append(nn.Sequential(lin, nn.GELU()) if i < cfg.n_layers - 1 else nn.Sequential(lin))
        self.layers = nn.ModuleList(layers)

    def forward(self, x):                      # x: (B, d_in) -> (B, d_out)
        for layer in self.layers:
            x = layer(x)
        return x


class FeedForward(nn.Module):
    """The transformer MLP h → 4h → h (Megatron's MLP; chapter 07 splits it column-then-row)."""

    def __init__(self, d_model: int, d_hidden: int | None = None, dropout: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_hidden or 4 * d_model)
        self.fc2 = nn.Linear(d_hidden or 4 * d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        return F.dropout(self.fc2(F.gelu(self.fc1(x))), self.dropout, self.training)


# ------------------------------------------------------------------ the GPT

class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_heads, self.dropout = cfg.n_heads, cfg.dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        # True above the diagonal: the future positions a token may not attend to.
        self.register_buffer("future", torch.ones(cfg.seq_len, cfg.seq_len, dtype=torch.bool).triu(1),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_heads
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_heads, hs).transpose(1, 2)          # (B, nh, T, hs)
        k = k.view(B, T, self.n_heads, hs).transpose(1, 2)
        v = v.view(B, T, self.n_heads, hs).transpose(1, 2)
        # Written out (no fused attention) so every tensor Korthikanti et al. count is really stored:
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))     # (B, nh, T, T)
        att = att.masked_fill(self.future[:T, :T], float("-inf"))
        att = F.dropout(torch.softmax(att, dim=-1), self.dropout, self.training)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)              # (B, T, C)
        return F.dropout(self.proj(y), self.dropout, self.training)


class Block(nn.Module):
    """Pre-LayerNorm GPT block: x + attn(ln1(x)), then + mlp(ln2(·))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(cfg.d_model), CausalSelfAttention(cfg)
        self.ln2, self.mlp = nn.LayerNorm(cfg.d_model), FeedForward(cfg.d_model, dropout=cfg.dropout)

    def forward(self, x):                      # x: (B, T, C)
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Embed(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.tok, self.pos = nn.Embedding(cfg.vocab_size, cfg.d_model), nn.Embedding(cfg.seq_len, cfg.d_model)

    def forward(self, idx):                    # idx: (B, T) token ids -> (B, T, C)
        return self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))


class Head(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln, self.out = nn.LayerNorm(cfg.d_model), nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def forward(self, x):                      # (B, T, C) -> logits (B, T, V)
        return self.out(self.ln(x))


class TinyGPT(nn.Module):
    def __init__(self, cfg: GPTConfig = GPTConfig()):
        super().__init__()
        self.cfg = cfg
        self.embed = Embed(cfg)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.head = Head(cfg)

    def forward(self, idx):
        x = self.embed(idx)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


# ------------------------------------------------------------------ one entry point per kind

def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"model kind {kind!r}: use one of {KINDS}")


def config(kind: str, **overrides):
    _check_kind(kind)
    return replace(MLPConfig() if kind == "mlp" else GPTConfig(), **overrides)


def build(kind: str, seed: int = 0, **overrides) -> nn.Module:
    """The model ``kind`` with weights drawn from ``torch.manual_seed(seed)``: identical on every rank."""
    cfg = config(kind, **overrides)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyMLP(cfg) if kind == "mlp" else TinyGPT(cfg)


def make_batch(kind: str, batch_size: int, seed: int = 1, **overrides) -> tuple[torch.Tensor, torch.Tensor]:
    """A deterministic batch (inputs, targets) that the model can learn.

    mlp: x ~ N(0, 1), y = tanh(x Wᵀ) for a fixed random teacher W.  gpt: sequences t, t+k, t+2k, … (mod V)
    with a random start t and stride k ∈ {1, 2, 3}; the target is the input shifted by one token."""
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size}: need at least 1 sample")
    cfg = config(kind, **overrides)
    g = torch.Generator().manual_seed(seed)
    if kind == "mlp":
        teacher = torch.randn(cfg.d_out, cfg.d_in, generator=torch.Generator().manual_seed(1234))
        x = torch.randn(batch_size, cfg.d_in, generator=g)
        return x, torch.tanh(x @ teacher.T / math.sqrt(cfg.d_in))
    start = torch.randint(0, cfg.vocab_size, (batch_size, 1), generator=g)
    stride = torch.randint(1, 4, (batch_size, 1), generator=g)
    seq = (start + stride * torch.arange(cfg.seq_len + 1)) % cfg.vocab_size
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


def loss_fn(kind: str):
    """Mean squared error for the MLP, next-token cross-entropy for the GPT (both: mean over the batch)."""
    _check_kind(kind)
    if kind == "mlp":
        return F.mse_loss
    return lambda logits, target: F.cross_entropy(logits.flatten(0, 1), target.flatten())


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def stages(model: nn.Module, n_stages: int) -> list[nn.Sequential]:
    """Split a :class:`TinyMLP` into ``n_stages`` consecutive pipeline stages (chapter 07), layers shared
    as evenly as possible; each stage is an ``nn.Sequential`` of the model's own layer modules."""
    if not isinstance(model, TinyMLP):
        raise TypeError(f"stages() splits a TinyMLP; got {type(model).__name__}")
    n = len(model.layers)
    if not 1 <= n_stages <= n:
        raise ValueError(f"n_stages={n_stages}: a {n}-layer TinyMLP splits into 1..{n} stages")
    bounds = [round(i * n / n_stages) for i in range(n_stages + 1)]
    return [nn.Sequential(*model.layers[a:b]) for a, b in zip(bounds, bounds[1:])]
