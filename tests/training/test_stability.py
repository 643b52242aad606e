"""Chapter 26: spike counting, the gradient monitor, loss scaling, numerics."""
import math

import pytest

from helpers.training.resilience import stability


def test_spikes_counts_jumps_and_nonfinite():
    assert stability.spikes([4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 3, float("nan"), 1]) == 2


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
