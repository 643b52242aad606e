"""helpers.formulas.roofline: min(π, β·I), the ridge π/β and the time bound (Williams et al. 2009), on the H200's
datasheet numbers, and the roofline of helpers.compute.roofline giving the same numbers as before."""
import math

import pytest

from helpers.core import specs
from helpers.formulas import roofline as r

H200_BF16_TFLOPS, H200_HBM_GBps = 989.4, 4800        # NVIDIA H200 datasheet: 989 TFLOP/s dense bf16, 4.8 TB/s


def test_bound_and_ridge_on_the_h200_datasheet():
    spec = specs.lookup("H200 SXM")
    assert (spec.bf16_tflops, spec.hbm_GBps) == (H200_BF16_TFLOPS, H200_HBM_GBps)
    ridge = r.ridge_flop_per_byte(H200_BF16_TFLOPS, H200_HBM_GBps)
    assert ridge == pytest.approx(206.125)                            # 989.4e12 / 4.8e12
    assert r.attainable_tflops(10, H200_BF16_TFLOPS, H200_HBM_GBps) == pytest.approx(48.0)    # memory-bound
    assert r.attainable_tflops(ridge, H200_BF16_TFLOPS, H200_HBM_GBps) == pytest.approx(H200_BF16_TFLOPS)
    assert r.attainable_tflops(1e4, H200_BF16_TFLOPS, H200_HBM_GBps) == H200_BF16_TFLOPS       # the flat roof
    with pytest.raises(ValueError, match="≥ 0"):
        r.attainable_tflops(-1, 1, 1)
    with pytest.raises(ValueError, match="bw_GBps"):
        r.ridge_flop_per_byte(1, 0)


def test_time_bound_is_the_slower_of_the_two():
    # a 8192³ bf16 GEMM: 2·8192³ FLOPs over 3·8192²·2 bytes, intensity 8192/3 ≫ ridge: compute-bound
    flop, nbytes = 2 * 8192**3, 3 * 8192**2 * 2
    assert r.time_s(flop, nbytes, H200_BF16_TFLOPS, H200_HBM_GBps) == pytest.approx(flop / 989.4e12)
    assert r.time_s(1, 1e9, H200_BF16_TFLOPS, H200_HBM_GBps) == pytest.approx(1e9 / 4.8e12)


def test_line_points_one_per_decade_plus_ridge():
    xs = r.line_points((1e-2, 1e4), 206.125)
    assert xs == [0.01, 0.1, 1, 10, 100, 206.125, 1000, 10000]
    assert r.line_points((1e-2, 1e4), 1e6) == [10.0 ** k for k in range(-2, 5)]     # ridge off the axis
    assert all(math.isclose(a, b) for a, b in zip(r.line_points((0.5, 50), 7), [0.5, 1, 7, 10, 50]))


def test_old_call_sites_give_the_same_numbers():
    """helpers.compute.roofline.Roofline and Kernel computed these themselves before (HEAD c421e96)."""
    from helpers.compute import roofline

    roof = roofline.from_spec(specs.lookup("H200 SXM"))
    assert [roof.attainable_tflops(x, "bf16") for x in (0.1, 10, 100, 1000)] == pytest.approx(
        [0.48, 48.0, 480.0, 989.4], rel=1e-15)
    assert (roof.ridge("bf16"), roof.ridge("fp8")) == pytest.approx((206.125, 412.2708333333333), rel=1e-15)
    ks = [roofline.gemm_kernel(8192, 8192, 8192, "bf16"), roofline.gemm_kernel(1, 8192, 8192, "fp8"),
          roofline.stream_kernel("triad", 2**28), roofline.elementwise_kernel("ln", 2**24, 8, 2, "bf16")]
    assert [k.time_s(roof) for k in ks] == pytest.approx(
        [0.0011112913157226602, 1.3984426666666667e-05, 0.00067108864, 1.3981013333333332e-05], rel=1e-15)
