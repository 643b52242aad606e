"""The Llama-style decoder of chapter 18: shapes, parameter and FLOP counts by hand, GQA, RoPE."""
import math

import pytest
import torch
import torch.nn.functional as F

from helpers.training.models import llama


def test_shapes_and_loss():
    m = llama.build("tiny")
    x = torch.randint(0, 256, (2, 17))
    assert m(x[:, :-1]).shape == (2, 16, 256)
    loss = m(x[:, :-1], x[:, 1:])
    assert loss.shape == () and abs(loss.item() - math.log(256)) < 0.3      # random weights: about ln(vocab)


def test_llama_1b_params_by_hand():
    d, L, H, Hkv, hd, ff, V = 2048, 18, 16, 8, 128, 5632, 32000
    per_layer = d * H * hd + 2 * d * Hkv * hd + H * hd * d + 3 * d * ff + 2 * d     # Wq, Wk+Wv, Wo, SwiGLU, norms
    total = L * per_layer + d + 2 * V * d                                           # final norm, embedding, head
    c = llama.count_params("llama-1b")
    assert c == {"total": total, "non_embedding": total - V * d}
    assert 0.95e9 < total < 1.1e9 and c["non_embedding"] > 0.9e9
    m = llama.build(llama.CONFIGS["tiny"])
    assert sum(p.numel() for p in m.parameters()) == llama.count_params("tiny")["total"]


def test_tied_embeddings_count_once():
    cfg = llama.LlamaConfig(256, 64, 2, 4, 2, 128, tie_embeddings=True)
    m = llama.build(cfg)
    c = llama.count_params(cfg)
    assert sum(p.numel() for p in m.parameters()) == c["total"] == c["non_embedding"]


def test_flops_per_token_by_hand():
    n, L, T, d = llama.count_params("llama-1b")["non_embedding"], 18, 2048, 2048
    assert llama.flops_per_token("llama-1b", T) == 6 * n + 6 * L * T * d       # PaLM's 12·L·T·d halved (causal)


def test_gqa_equals_repeated_kv_attention():
    torch.manual_seed(0)
    B, H, Hkv, T, hd = 2, 8, 2, 10, 16
    q, k, v = torch.randn(B, H, T, hd), torch.randn(B, Hkv, T, hd), torch.randn(B, Hkv, T, hd)
    g = H // Hkv
    got = F.scaled_dot_product_attention(q, llama.repeat_kv(k, g), llama.repeat_kv(v, g), is_causal=True)
    # by hand: query head i reads KV head i // g (Llama's repeat_interleave)
    want = F.scaled_dot_product_attention(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), is_causal=True)
    assert torch.allclose(got, want, atol=1e-6)
    for i in range(H):
        one = F.scaled_dot_product_attention(q[:, i], k[:, i // g], v[:, i // g], is_causal=True)
        assert torch.allclose(got[:, i], one, atol=1e-6)


def test_rope_depends_on_relative_position_only():
    torch.manual_seed(0)
    hd = 16
    cos, sin = llama.rope_tables(hd, 40)
    q, k = torch.randn(hd), torch.randn(hd)
    rot = lambda x, p: llama.apply_rope(x, cos[p], sin[p])      # noqa: E731
    dots = [float(rot(q, m) @ rot(k, m - 3)) for m in (3, 10, 25, 39)]
    assert max(dots) - min(dots) < 1e-4                         # same offset 3 → same score
    assert abs(float(rot(q, 10) @ rot(k, 7)) - float(rot(q, 10) @ rot(k, 2))) > 1e-3
    assert torch.allclose(rot(q, 0), q) and torch.allclose(rot(q, 9).norm(), q.norm())   # a rotation


def test_bad_config_is_a_clear_error():
    with pytest.raises(ValueError, match="use one of"):
        llama.config("llama-70b")
    with pytest.raises(ValueError, match="n_kv_heads"):
        llama.LlamaConfig(256, 64, 2, 4, 3, 128)
