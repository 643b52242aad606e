"""Chapter 18: FLOPs per token, attention variants and their I/O count, ring attention, MoE expert parallelism."""
import pytest
import torch

from helpers.core import launch
from helpers.formulas import flops
from helpers.training.models import attention
from helpers.training.parallel import context_parallel, moe
from helpers.training.profiling import gpt_mfu


def test_flops_per_token():
    f = flops.flops_per_token(1000, 2, 16, 8)              # what gpt_mfu.run counts per token
    assert f == {"dense_flops": 6000, "attention_flops": 12 * 2 * 16 * 8, "total_flops": 6000 + 3072}


def test_gpt_mfu_runs_and_learns():
    r = gpt_mfu.run(steps=3, batch=2, seq_len=16, d_model=32, n_layers=1, n_heads=2)
    assert r.last_loss < r.first_loss and r.mfu > 0 and r.tokens_per_step == 32
    with pytest.raises(ValueError, match="steps"):
        gpt_mfu.run(steps=1)


@pytest.mark.parametrize("causal", [True, False])
def test_three_attentions_agree(causal):
    q, k, v = attention.qkv(2, 3, 40, 8)
    ref = attention.naive(q, k, v, causal)
    assert torch.allclose(attention.sdpa(q, k, v, causal), ref, atol=1e-5)
    assert torch.allclose(attention.tiled(q, k, v, block=16, causal=causal), ref, atol=1e-5)


@pytest.mark.parametrize("T,block", [(64, 16), (128, 32), (96, 96)])
def test_counted_io_equals_the_model(T, block):
    q, k, v = attention.qkv(1, 2, T, 8)
    io = attention.IOCount()
    attention.tiled(q, k, v, block=block, causal=False, io=io)
    assert io.read_bytes + io.write_bytes == attention.io_model(T, 8, block, batch_heads=2)["tiled_bytes"]


def test_sdpa_saves_less_than_naive():
    q, k, v = attention.qkv(1, 2, 256, 16, grad=True)
    assert attention.saved_bytes(attention.sdpa, q, k, v) < attention.saved_bytes(attention.naive, q, k, v) / 2


def test_moe_balance_loss_and_validation():
    layer = moe.MoE(16, 4, 2)
    out, aux = layer(torch.randn(128, 16, generator=torch.Generator().manual_seed(0)))
    assert out.shape == (128, 16) and 0.9 < aux.item() < 1.5
    with pytest.raises(ValueError, match="top_k"):
        moe.MoE(16, 4, 5)


def test_ring_attention_and_expert_parallel_equal_single_process():
    res = launch.run(context_parallel.cp_and_ep, 2, timeout_s=180).results
    # the bound and what was seen: context_parallel.RING_TOLERANCE
    assert max(r["ring"]["max_abs_diff"] for r in res) < context_parallel.RING_TOLERANCE
    assert max(r["moe"]["max_abs_diff"] for r in res) < 1e-6
