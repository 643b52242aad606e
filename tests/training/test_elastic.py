"""Chapter 14: Young/Daly (helpers.formulas.checkpointing) against the failure simulator; a torchrun job with a
killed rank resumes exactly."""
import math

import pytest

from helpers.formulas import checkpointing
from helpers.training.resilience import elastic


def test_sweep_is_centred_on_young():
    res = elastic.sweep(60.0, 3600.0, 10 * 3600.0, points=5, runs=3)
    assert res[2].interval_s == pytest.approx(checkpointing.young(60.0, 3600.0))


def test_cluster_mtbf():
    assert elastic.cluster_mtbf_s(1000, 10) == pytest.approx(36.0)


def test_simulator_without_failures_is_exact():
    r = elastic.simulate(100, 5, 1e15, 1000, runs=3)
    assert r.wall_s == pytest.approx(1000 + 10 * 5) and r.failures == 0


def test_simulator_optimum_is_near_daly():
    d, M = 60.0, 3600.0
    res = elastic.sweep(d, M, 20 * M, restart_s=0, points=31, runs=400)
    best = min(res, key=lambda r: r.wall_s)
    assert 0.5 < best.interval_s / checkpointing.daly(d, M) < 2.0
    # waste at the optimum ≈ √(2δ/M) to first order
    assert best.waste_frac == pytest.approx(math.sqrt(2 * d / M), rel=0.35)


def test_killed_rank_resumes_to_the_same_weights():
    r = elastic.killed_vs_uninterrupted(steps=8, every=3, kill_at=5)
    assert r["killed"].attempts == 2 and r["killed"].resumed_from_step == 3
    assert r["straight"].attempts == 1
    assert r["bit_identical"] and r["max_abs_diff"] == 0.0


def test_bad_kill_step_is_refused(tmp_path):
    with pytest.raises(ValueError, match="kill_at"):
        elastic.run_job(str(tmp_path), steps=4, kill_at=9)
