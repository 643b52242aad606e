"""helpers.compute.hplbench: the HPL-style fp64 solve on a CPU (the GPU path runs in `make test-gpu`). No speed asserts."""
import pytest

from helpers.compute import hplbench


def test_hpl_residual_passes():
    (r,) = hplbench.hpl(n=128, repeats=1, device="cpu")
    assert r.passed and r.scaled_residual < 16 and r.flop == pytest.approx(2 / 3 * 128**3 + 1.5 * 128**2)
    assert r.pct_of_peak is None and "no datasheet peak" in r.peak_note


def test_hpl_flop_and_bad_size():
    assert hplbench.hpl_flop(3) == pytest.approx(2 / 3 * 27 + 1.5 * 9)
    with pytest.raises(ValueError, match="n ≥ 16"):
        hplbench.hpl(n=8, device="cpu")
