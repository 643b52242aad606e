import pytest

from helpers.training.calc import planner


def _one_t():
    pr = planner.PRESETS["megatron-1t"]
    return pr, planner.Cluster(pr["n_gpus"], pr["gpu"])


def test_published_1t_config_fits_and_ranks_near_the_top():
    """Narayanan et al. 2021 Table 1: 1T parameters on 3072 A100s with t=8, p=64, d=6."""
    pr, cluster = _one_t()
    plans = planner.enumerate_plans(pr["model"], cluster, pr["global_batch"])
    best = plans[0].step_time_s
    published = [i for i, p in enumerate(plans) if (p.dp, p.tp, p.pp) == pr["published"]]
    assert published, "the published configuration must fit"
    assert published[0] < 10
    assert plans[published[0]].step_time_s <= 1.05 * best
    # Without recomputation it does not fit (Megatron trained it with activation recomputation).
    p = planner.evaluate(pr["model"], cluster, pr["global_batch"], 6, 8, 64, 0, "none")
    assert not p.fits


def test_estimate_is_in_the_published_ballpark():
    """163 TFLOP/s per GPU measured (Table 1, full recomputation); the model should land within ±25%."""
    pr, cluster = _one_t()
    p = planner.evaluate(pr["model"], cluster, pr["global_batch"], 6, 8, 64, 0, "full")
    assert 0.75 * 163 < p.tflops_per_gpu < 1.25 * 163
    assert 0 < p.mfu < 1 and p.bubble_s == pytest.approx((p.compute_s + p.tp_comm_s + p.pp_comm_s) * 63 / 512)


def test_flops_match_megatron_eq3():
    pr, _ = _one_t()
    m, B = pr["model"], pr["global_batch"]
    s, L, h, V = m.seq_len, m.n_layers, m.hidden, m.vocab
    eq3 = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))        # with full recomputation
    no_recompute = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))
    assert planner.flops_per_step(m, B, "full") == pytest.approx(eq3)
    assert planner.flops_per_step(m, B, "none") == pytest.approx(no_recompute)


def test_errors_name_the_fix():
    pr, cluster = _one_t()
    with pytest.raises(ValueError, match="dp·tp·pp"):
        planner.evaluate(pr["model"], cluster, 3072, 2, 8, 64)
    small = planner.Cluster(8, "A100 SXM4 80GB")
    with pytest.raises(ValueError, match="fits"):
        planner.enumerate_plans(pr["model"], small, 64)
    with pytest.raises(ValueError, match="spec table"):
        planner.Cluster(8, "Mystery GPU")


def test_uneven_stage_split_like_llama3():
    """Llama 3 405B: 126 layers on 16 pipeline stages, one layer fewer on the first and last (arXiv:2407.21783)."""
    assert planner.stage_layers(126, 16) == (7,) + (8,) * 14 + (7,)
    assert planner.stage_layers(128, 16) == (8,) * 16
    assert sum(planner.stage_layers(10, 4)) == 10 and max(planner.stage_layers(10, 4)) == 3
    with pytest.raises(ValueError, match="pp=17"):
        planner.stage_layers(16, 17)
    from helpers.training.calc import memory
    m = memory.ModelShape(n_layers=126, hidden=16384, n_heads=128, vocab=128256, seq_len=8192)
    c = planner.Cluster(16384, "NVIDIA H100 80GB HBM3")
    p = planner.evaluate(m, c, 2048, dp=128, tp=8, pp=16, zero_stage=1, recompute="full")
    assert p.stage_layers == planner.stage_layers(126, 16) and "uneven" in p.note
    even = memory.ModelShape(n_layers=128, hidden=16384, n_heads=128, vocab=128256, seq_len=8192)
    q = planner.evaluate(even, c, 2048, dp=128, tp=8, pp=16, zero_stage=1, recompute="full")
    assert p.compute_s == pytest.approx(q.compute_s, rel=1e-3)      # the 8-layer stages set the pace
    assert any(x.pp == 16 for x in planner.enumerate_plans(m, c, 2048, zero_stages=(1,), recomputes=("full",),
                                                           micro_batches=(1,), only_fitting=False, uneven=True))


def test_v100_is_planned_at_fp16_with_a_note():
    from helpers.training.calc import memory
    m = memory.ModelShape(n_layers=24, hidden=2048, n_heads=16, vocab=51200, seq_len=2048)
    plans = planner.enumerate_plans(m, planner.Cluster(64, "Tesla V100-SXM2-32GB"), 512)
    assert plans and all("fp16" in p.note for p in plans)
    assert planner.Cluster(64, "Tesla V100-SXM2-16GB").spec.memory_GB == 16
