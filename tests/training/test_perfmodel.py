"""The performance models reproduce the published numbers they come from (chapter 28); the shared formulas
(6ND, MFU) are helpers.formulas.flops, tested in tests/formulas/test_flops.py."""
import pytest

from helpers.core import specs
from helpers.formulas import flops
from helpers.training.calc import perfmodel as pm
from helpers.training.calc import published

A100 = specs.lookup("A100 SXM4 80GB").bf16_tflops          # 312 dense bf16


def test_training_flops_and_gpus_needed_round_trip():
    f = flops.training_flops(7e9, 2e12)
    assert f == pytest.approx(8.4e22)
    n = pm.gpus_needed(f, days=10, peak_tflops=989.4, mfu=0.4)
    assert pm.training_days(7e9, 2e12, n, 989.4, 0.4) == pytest.approx(10)


def test_llama_65b_about_21_days_within_5_percent():
    # Touvron et al. 2023 §2.4: 380 tokens/s/GPU on 2048 A100-80GB; 1.4T tokens take about 21 days
    assert pm.days_from_throughput(1.4e12, 380, 2048) == pytest.approx(21, rel=0.05)
    mfu = flops.mfu(380 * 2048, flops.training_flops_per_token(65.2e9), 2048, A100)
    assert mfu == pytest.approx(0.476, abs=0.002)              # REFERENCE_NUMBERS §6: ≈ 47.6 %
    assert pm.training_days(65.2e9, 1.4e12, 2048, A100, mfu) == pytest.approx(21, rel=0.05)
    run = next(r for r in published.PUBLISHED_RUNS if r.name == "LLaMA-65B")
    assert run.implied_mfu(A100) == pytest.approx(mfu, rel=0.01)   # Table 15 GPU-hours agree with the rate


def test_megatron_1t_52_percent_and_training_time():
    # Narayanan et al. 2021 Table 1 / §5.1: 1T model (128 layers, h=25600), 163 TFLOP/s per A100 = 52 % of peak
    assert pm.megatron_params(128, 25600, 51200, 2048) == pytest.approx(1.008e12, rel=0.001)
    assert flops.utilization(163e12, A100) == pytest.approx(0.52, abs=0.005)
    assert pm.megatron_training_days(450e9, 1.008e12, 3072, 163) == pytest.approx(84, rel=0.01)
    assert pm.megatron_training_days(300e9, 175e9, 1024, 140) == pytest.approx(34, rel=0.01)


def test_megatron_flops_recompute_is_four_thirds():
    a = pm.megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200, recompute=True)
    b = pm.megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200, recompute=False)
    assert 1.3 < a / b < 4 / 3 + 1e-9


def test_zero_7_5b_example():
    # Rajbhandari et al. 2020 Fig. 1: Ψ = 7.5B, N_d = 64 → 120, 31.4, 16.6, 1.9 GB
    got = [pm.zero_memory_bytes(7.5e9, 64, s) / 1e9 for s in range(4)]
    assert got == pytest.approx([120, 31.4, 16.6, 1.9], abs=0.05)
    with pytest.raises(ValueError, match="stage"):
        pm.zero_memory_bytes(7.5e9, 64, 4)


def test_pipeline_bubble():
    assert pm.pipeline_bubble(8, 32) == pytest.approx(7 / 32)
    assert pm.pipeline_bubble(8, 32, v=4) == pytest.approx(7 / 128)
    assert pm.pipeline_bubble_of_total(8, 32) == pytest.approx(7 / 39)
    assert pm.pipeline_bubble(1, 1) == 0
    with pytest.raises(ValueError):
        pm.pipeline_bubble(0, 4)


def test_capacity_plan_and_cluster_size():
    jobs = [pm.Job("big", 70e9, 2e12, 1), pm.Job("small", 7e9, 2e12, 4)]
    plan = pm.capacity_plan(jobs, 989.4, 0.4)
    assert sum(p.share_of_total for p in plan) == pytest.approx(1)
    assert plan[0].gpu_hours_per_year == pytest.approx(pm.gpu_hours(8.4e23, 989.4, 0.4))
    total = sum(p.gpu_hours_per_year for p in plan)
    assert pm.cluster_gpus(total, utilisation=0.5) == pytest.approx(2 * total / 8760)


def test_bad_inputs_name_the_value():
    with pytest.raises(ValueError, match="mfu=45"):
        pm.gpus_needed(1e24, 10, 989.4, 45)
    with pytest.raises(ValueError, match="n_params=-1"):
        pm.training_days(-1, 1e12, 8, 989.4, 0.4)


def test_goodput_reproduces_llama3_effective_time():
    # Llama 3 (arXiv:2407.21783): 419 unexpected interruptions in 54 days on 16,384 GPUs; ">90% effective
    # training time". The default restart and checkpoint assumptions must land on the same side of 90 %.
    g = pm.goodput(16_384, 405e9)
    assert g.failures_per_day == pytest.approx(419 / 54)
    assert 0.9 < g.goodput < 0.97
    assert g.interval_s == pytest.approx((2 * g.checkpoint_write_s * 86400 / g.failures_per_day) ** 0.5)
    # more GPUs → more failures → less goodput; no failures → no loss
    assert pm.goodput(65_536, 405e9).goodput < g.goodput < pm.goodput(1024, 405e9).goodput
    assert pm.goodput(1024, 7e9, failures_per_gpu_day=0).goodput == 1
    assert pm.training_days_with_goodput(405e9, 15.6e12, 16_384, 989.4, 0.4) == pytest.approx(
        pm.training_days(405e9, 15.6e12, 16_384, 989.4, 0.4) / g.goodput)
    with pytest.raises(ValueError, match="restart_s"):
        pm.goodput(8, 7e9, restart_s=0)
