"""helpers.formulas.checkpointing: Young's and Daly's intervals and Young's waste, checked against the formulas'
own limits and Llama 3's published effective training time, and the old call sites giving the same numbers."""
import math

import pytest

from helpers.formulas import checkpointing as ck


def test_young_and_daly():
    assert ck.young(50, 10000) == pytest.approx(math.sqrt(2 * 50 * 10000)) == pytest.approx(1000)
    # Daly (2006): ≈ Young − δ for δ ≪ M, and M once δ ≥ 2M
    assert ck.daly(1, 1e6) == pytest.approx(ck.young(1, 1e6) - 1, rel=1e-3)
    assert ck.daly(300, 100) == 100
    assert ck.young(0.05, 8) == pytest.approx(math.sqrt(0.8))          # homogeneous: hours in, hours out
    with pytest.raises(ValueError, match="> 0"):
        ck.young(0, 10)


def test_waste_is_minimal_at_young():
    delta, m = 60.0, 3600.0 * 5
    tau = ck.young(delta, m)
    w = ck.young_waste_fraction(tau, delta, 1 / m)
    assert w == pytest.approx(math.sqrt(2 * delta / m))                 # Young 1974: W(τ*) = √(2δ/M)
    for off in (0.8, 1.25):                                             # flat, but lowest at τ*
        assert w < ck.young_waste_fraction(off * tau, delta, 1 / m)
    assert ck.young_waste_fraction(tau, delta, 1 / m, restart_s=600) == pytest.approx(w + 600 / m)
    assert ck.young_waste_fraction(tau, delta, 0.0) == delta / tau      # no failures: only the writes
    with pytest.raises(ValueError, match="τ > 0"):
        ck.young_waste_fraction(0, delta, 1 / m)


def test_llama3_goodput_above_90_percent():
    # Llama 3 (arXiv:2407.21783 §3.3.4): > 90 % effective training time on 16K GPUs with 419 interruptions in 54 days
    from helpers.training.calc import perfmodel

    g = perfmodel.goodput(16_384, 405e9)
    assert g.interval_s == pytest.approx(ck.young(g.checkpoint_write_s, 86400 / g.failures_per_day))
    assert 0.9 < g.goodput < 0.97


def test_old_call_sites_give_the_same_numbers():
    """elastic.young/daly, spot.young_interval_h and perfmodel.goodput's inline Young (HEAD c421e96)."""
    from helpers.training.calc import perfmodel

    assert (ck.young(50, 10000), ck.daly(50, 10000)) == (1000.0, 966.9444444444445)
    assert [ck.young(0.05, m) for m in (2, 4, 8, 16, 32, 0.5, 1, 3)] == [
        0.4472135954999579, 0.6324555320336759, 0.8944271909999159, 1.2649110640673518, 1.7888543819998317,
        0.22360679774997896, 0.31622776601683794, 0.5477225575051662]
    g = perfmodel.goodput(16_384, 405e9)
    assert (g.interval_s, g.lost_fraction) == (175.5792917995472, 0.06965186112483074)         # bit for bit
