"""helpers.formulas.flops: GEMM and attention FLOPs, training FLOPs per token (Kaplan 2020, PaLM 2022) and MFU
(PaLM App. B), checked against the published numbers, and every old MFU call site giving the same numbers."""
import pytest

from helpers.core import specs
from helpers.formulas import flops

A100 = specs.lookup("A100 SXM4 80GB").bf16_tflops          # 312 dense bf16


def test_gemm_counts():
    assert flops.gemm_flops(8192, 8192, 8192) == 2 * 8192**3
    # NVIDIA's Matrix Multiplication Background guide: intensity 2MNK / (2(MK + NK + MN)) for fp16; M=N=K=8192 → 2731
    assert flops.gemm_flops(8192, 8192, 8192) / flops.gemm_bytes(8192, 8192, 8192, 2) == pytest.approx(8192 / 3)
    assert flops.gemm_bytes(1, 8192, 8192, 1, 2) == 8192 + 8192**2 + 2 * 8192      # fp8 in, bf16 out
    assert flops.attention_flops(2, 1024, 64, n_layers=3) == 4 * 2 * 1024**2 * 64 * 3


def test_flops_per_token_forms():
    assert flops.training_flops_per_token(1e9) == 6e9                               # Kaplan §2.1: 6N
    k = flops.training_flops_per_token(1e9, 24, 2048, 2048, form="kaplan")
    p = flops.training_flops_per_token(1e9, 24, 2048, 2048, form="palm")
    assert p - 6e9 == pytest.approx(2 * (k - 6e9))          # PaLM also counts the weighted sum of V
    parts = flops.flops_per_token(1000, 2, 16, 8)
    assert parts == {"dense_flops": 6000, "attention_flops": 12 * 2 * 16 * 8, "total_flops": 6000 + 3072}
    assert all(isinstance(v, int) for v in parts.values())  # integers in, integers out
    with pytest.raises(ValueError, match="form="):
        flops.flops_per_token(1e9, form="gpt")
    with pytest.raises(ValueError, match="n_params=-1"):
        flops.training_flops(-1, 1e12)


def test_causal_halves_the_attention_term():
    # FlashAttention-2 (arXiv:2307.08691 §4.1): with a causal mask, count half the attention FLOPs
    full = flops.flops_per_token(1000, 2, 16, 8)
    half = flops.flops_per_token(1000, 2, 16, 8, causal=True)
    assert half == {"dense_flops": 6000, "attention_flops": 6 * 2 * 16 * 8, "total_flops": 6000 + 1536}
    assert 2 * half["attention_flops"] == full["attention_flops"]
    assert flops.training_flops_per_token(1000, 2, 16, 8, form="kaplan", causal=True) == 6000 + 3 * 2 * 16 * 8
    assert flops.training_flops_per_token(1e9, causal=True) == 6e9                # no attention term: nothing halved


def test_palm_540b_mfu_46_2_percent():
    # Chowdhery et al. 2022 App. B: 238.3K tokens/s on 6144 TPU v4 (275 TFLOP/s bf16), 6N + 12LHQT → 46.2 %
    fpt = flops.training_flops_per_token(540.35e9, n_layers=118, seq_len=2048, d_attn=48 * 256, form="palm")
    assert flops.mfu(238.3e3, fpt, 6144, 275) == pytest.approx(0.462, abs=0.001)


def test_llama_65b_and_megatron_utilisation():
    # Touvron et al. 2023 §2.4: 380 tokens/s/GPU on 2048 A100-80GB → 6N MFU ≈ 47.6 %
    assert flops.mfu(380 * 2048, flops.training_flops_per_token(65.2e9), 2048, A100) == pytest.approx(0.476, abs=0.002)
    # Narayanan et al. 2021 §5.1: 163 TFLOP/s per A100 is 52 % of the 312 TFLOP/s peak
    assert flops.utilization(163e12, A100) == pytest.approx(0.52, abs=0.005)
    assert flops.hfu(1.0, 8.0, 1, 1e-12) == 8 * flops.mfu(1.0, 1.0, 1, 1e-12)
    assert flops.training_flops(7e9, 2e12) == pytest.approx(8.4e22)


def test_old_call_sites_give_the_same_numbers():
    """perfmodel, gpt_mfu, planner, published runs and figures.workloads computed MFU and 6N themselves before
    (numbers recorded from HEAD c421e96)."""
    from helpers.figures import workloads
    from helpers.training.calc import planner, published

    assert flops.training_flops_per_token(540.35e9, 118, 2048, 48 * 256) == 3277734806784.0
    assert flops.training_flops_per_token(1e9, 24, 2048, 2048, form="kaplan") == 6603979776.0
    assert flops.mfu(238.3e3, 3277734806784.0, 6144, 275) == pytest.approx(0.4622894202513182, rel=1e-15)
    assert flops.flops_per_token(int(6.5e9), 32, 4096, 4096) == {
        "dense_flops": 39000000000, "attention_flops": 6442450944, "total_flops": 45442450944}
    run = next(r for r in published.PUBLISHED_RUNS if r.name == "LLaMA-65B")
    assert run.implied_mfu(312) == pytest.approx(0.47694147240100626, rel=1e-14)
    pr = planner.PRESETS["megatron-1t"]
    cluster = planner.Cluster(pr["n_gpus"], pr["gpu"])
    p = planner.evaluate(pr["model"], cluster, pr["global_batch"], 6, 8, 64, 1, "full", 1)
    assert (p.step_time_s, p.tflops_per_gpu, p.mfu) == pytest.approx(
        (105.44437324581199, 158.64936510701511, 0.3814910581514527), rel=1e-14)
    p = planner.evaluate(pr["model"], cluster, pr["global_batch"], 6, 8, 64, 3, "selective", 1)
    assert (p.compute_s, p.step_time_s, p.mfu) == pytest.approx(
        (67.33714885360683, 79.43314984478631, 0.5064143321052228), rel=1e-14)
    w = workloads.llm_training()
    assert (w.flops_per_item, w.network_bytes_per_item) == (42000000000.0, 7161000.0)
