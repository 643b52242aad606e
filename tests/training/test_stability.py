"""Chapter 26: spike counting, the gradient monitor, loss scaling, numerics."""
import math

import pytest
import torch

from helpers.training.resilience import stability


def test_spikes_counts_jumps_that_recover_and_nonfinite():
    curve = [4, 3, 2] + [1] * 20 + [3, 1, 1, float("nan"), 1] + [1] * 10
    assert stability.spike_events(curve) == ([23, 26], False)
    assert stability.spikes(curve) == 2
    assert stability.spikes([4, 3, 2] + [1] * 20 + [1.2, 0.9]) == 0          # noise, not a spike


def test_divergence_is_not_counted_as_spikes():
    assert stability.spike_events([4, 3, 2] + [1] * 20 + [5] * 25) == ([], True)      # never comes back
    assert stability.spike_events([4, 30, 60, 90, 80, 95, 70, 85] * 5) == ([], True)    # above the untrained loss


def test_qk_norm_bounds_attention_logits_and_keeps_initial_weights():
    plain = stability.build_model(stability.Recipe("p"), seed=0, d_model=16)
    qk = stability.build_model(stability.Recipe("q", qk_norm=True), seed=0, d_model=16)
    assert all((plain.state_dict()[k] == v).all() for k, v in qk.state_dict().items() if k in plain.state_dict())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)              # a tiny model on a shared CPU: one thread is many times faster
    try:
        hot = stability.train(stability.Recipe("hot", lr=0.1), steps=40, d_model=16)
        cool = stability.train(stability.Recipe("qk", lr=0.1, qk_norm=True), steps=40, d_model=16)
    finally:
        torch.set_num_threads(threads)
    assert cool.max_attn_logit < hot.max_attn_logit / 3 and len(hot.attn_logits) == 40


def test_monitor_flags_a_jump():
    m = stability.GradMonitor(factor=3, min_steps=3)
    for n in [1, 1, 1, 1, 10, 1]:
        m.update(n)
    assert m.flags == [4]


def test_fp16_needs_loss_scaling():
    plain = stability.train(stability.Recipe("fp16", lr=0.01, precision="fp16", loss_shrink=2**-20), steps=6, d_model=16)
    scaled = stability.train(stability.Recipe("s", lr=0.01, precision="fp16-scaled", loss_shrink=2**-20), steps=6,
                             d_model=16)
    assert plain.zero_grad_frac > 0.9 and scaled.zero_grad_frac < 0.1


def test_numerics():
    rows = {r["dtype"]: r for r in stability.overflow_underflow()}
    assert math.isinf(rows["fp16"]["70000 →"]) and rows["bf16"]["1e-8 →"] > 0 and rows["fp16"]["1e-8 →"] == 0
    sm = stability.softmax_naive_vs_stable([10.0, 11.0, 12.0])
    assert math.isnan(sm["naive"][2]) and sm["stable"][2] == pytest.approx(sm["reference"][2], abs=1e-3)
    acc = {r["accumulator"]: r for r in stability.accumulation_error(1024)}
    assert acc["bf16"]["sum"] == 256.0 and acc["fp32"]["rel_error"] < 1e-5


def test_bad_recipe():
    with pytest.raises(ValueError, match="precision"):
        stability.Recipe("x", precision="fp8")
