"""The performance models reproduce the published numbers they come from (chapter 28)."""
import pytest

from helpers.training.calc import perfmodel as pm
from helpers.core import specs

A100 = specs.lookup("A100 SXM4 80GB").bf16_tflops          # 312 dense bf16


def test_training_flops_and_gpus_needed_round_trip():
    f = pm.training_flops(7e9, 2e12)
    assert f == pytest.approx(8.4e22)
    n = pm.gpus_needed(f, days=10, peak_tflops=989.4, mfu=0.4)
    assert pm.training_days(7e9, 2e12, n, 989.4, 0.4) == pytest.approx(10)


def test_llama_65b_about_21_days_within_5_percent():
    # Touvron et al. 2023 §2.4: 380 tokens/s/GPU on 2048 A100-80GB; 1.4T tokens take about 21 days
    assert pm.days_from_throughput(1.4e12, 380, 2048) == pytest.approx(21, rel=0.05)
    mfu = pm.mfu(380 * 2048, pm.flops_per_token(65.2e9), 2048, A100)
    assert mfu == pytest.approx(0.476, abs=0.002)              # REFERENCE_NUMBERS §6: ≈ 47.6 %
    assert pm.training_days(65.2e9, 1.4e12, 2048, A100, mfu) == pytest.approx(21, rel=0.05)
    run = next(r for r in pm.PUBLISHED_RUNS if r.name == "LLaMA-65B")
    assert run.implied_mfu(A100) == pytest.approx(mfu, rel=0.01)   # Table 15 GPU-hours agree with the rate


def test_palm_540b_mfu_46_2_percent():
    # Chowdhery et al. 2022 App. B: 238.3K tokens/s on 6144 TPU v4 (275 TFLOP/s bf16), 6N + 12LHQT
    fpt = pm.flops_per_token(540.35e9, n_layers=118, seq_len=2048, d_attn=48 * 256, form="palm")
    assert pm.mfu(238.3e3, fpt, 6144, 275) == pytest.approx(0.462, abs=0.001)


def test_megatron_1t_52_percent_and_training_time():
    # Narayanan et al. 2021 Table 1 / §5.1: 1T model (128 layers, h=25600), 163 TFLOP/s per A100 = 52 % of peak
    assert pm.megatron_params(128, 25600, 51200, 2048) == pytest.approx(1.008e12, rel=0.001)
    assert pm.utilization(163e12, A100) == pytest.approx(0.52, abs=0.005)
    assert pm.megatron_training_days(450e9, 1.008e12, 3072, 163) == pytest.approx(84, rel=0.01)
    assert pm.megatron_training_days(300e9, 175e9, 1024, 140) == pytest.approx(34, rel=0.01)


def test_megatron_flops_recompute_is_four_thirds():
    a = pm.megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200, recompute=True)
    b = pm.megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200, recompute=False)
    assert 1.3 < a / b < 4 / 3 + 1e-9


def test_flops_per_token_forms():
    assert pm.flops_per_token(1e9) == 6e9
    k = pm.flops_per_token(1e9, 24, 2048, 2048, form="kaplan")
    p = pm.flops_per_token(1e9, 24, 2048, 2048, form="palm")
    assert p - 6e9 == pytest.approx(2 * (k - 6e9))
    with pytest.raises(ValueError, match="form="):
        pm.flops_per_token(1e9, form="gpt")


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
        pm.training_flops(-1, 1e12)


def test_published_runs_file_has_sources_and_known_gpus():
    runs = pm.load_runs()
    assert len(runs) >= 10 and len({r.name for r in runs}) == len(runs)
    for r in runs:
        assert r.source.startswith("https://") and r.says and r.spec is not None
        assert r.total_gpu_hours or r.mfu_published or r.tflops_published      # something to compare
    l65 = next(r for r in runs if r.name == "LLaMA-65B")
    assert (l65.n_gpus, l65.gpu_hours, l65.days) == (2048, 1_022_362, 21)      # LLaMA §2.4 and Table 15
    gpt3 = next(r for r in runs if r.name == "GPT-3 175B")
    assert gpt3.gpu_hours is None and gpt3.total_gpu_hours == 10_000 * 14.8 * 24  # derived, flagged


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


def test_check_published_is_out_of_sample():
    rows = pm.check_published()
    assert len(rows) == len(pm.PUBLISHED_RUNS)
    steady = {}
    for r in rows:
        if r.published_gpu_hours:
            assert r.predicted_gpu_hours == pytest.approx(r.published_gpu_hours * (1 + r.gpu_hours_error))
            run = next(x for x in pm.PUBLISHED_RUNS if x.name == r.name)
            steady[r.name] = run.implied_mfu() / (r.goodput or 1)
    for r in rows:   # the fitted MFU is the median of the OTHER runs, never the run itself
        import statistics
        assert r.predicted_mfu == pytest.approx(statistics.median(v for k, v in steady.items() if k != r.name))
    gpt3 = next(r for r in rows if r.name == "GPT-3 175B")
    assert "fp16" in gpt3.note and gpt3.days_error is not None       # V100: fp16 peak, never a TypeError
    opt = next(r for r in rows if r.name == "OPT-175B")
    assert opt.gpu_hours_error is None and opt.mfu_error is not None
    s = pm.error_summary(rows)
    assert s["gpu_hours_error"]["n"] == sum(r.gpu_hours_error is not None for r in rows)
    assert s["gpu_hours_error"]["worst"] >= s["gpu_hours_error"]["median"]
    fixed = pm.check_published(mfu=0.4, failures_per_gpu_day=0)
    l2_70 = next(r for r in fixed if r.name == "Llama 2 70B")
    assert l2_70.gpu_hours_error == pytest.approx(1_869_658 / 1_720_320 - 1, rel=1e-4)
