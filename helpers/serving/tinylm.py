"""The serving chapter's own tiny causal language model, built from torch's Transformer layers (chapter 19).

The serving wing imports no other wing, so it carries this small decoder (token + position embedding, pre-norm
``nn.TransformerEncoderLayer`` blocks under a causal mask, LM head) instead of borrowing ``training.models``;
the notebook may pass any model with the same (B, T) → (B, T, V) signature.
"""
from __future__ import annotations

import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 64, seq_len: int = 32, d_model: int = 64, n_layers: int = 2, n_heads: int = 4):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(seq_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, vocab, bias=False))
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq_len), persistent=False)

    def forward(self, idx):                    # idx: (B, T) -> logits (B, T, V)
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        return self.head(self.blocks(x, mask=self.mask[:T, :T], is_causal=True))


def build(seed: int = 0, **kw) -> TinyLM:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyLM(**kw)
