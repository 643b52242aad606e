"""Roofline model, kernel counting and the layer simulator (chapter 28); the figure is tested in tests/figures."""
import pytest

from helpers.core import specs
from helpers.compute import layersim, roofline
from helpers.formulas import roofline as froof


def test_h200_datasheet_ridge_points():
    r = roofline.from_spec(specs.lookup("NVIDIA H200"))
    assert r.ridge("bf16") == pytest.approx(206, abs=1)       # REFERENCE_NUMBERS §5
    assert r.ridge("fp8") == pytest.approx(412, abs=1)
    assert r.ridge("tf32") == pytest.approx(103, abs=1)


def test_attainable_is_min_of_roof_and_slope():
    r = roofline.Roofline("toy", (("fp32", 10.0),), (("DRAM", 100.0), ("LLC", 1000.0)))
    assert r.attainable_tflops(1.0, "fp32") == pytest.approx(0.1)          # 100 GB/s × 1 FLOP/B
    assert r.attainable_tflops(1e6, "fp32") == 10.0
    assert r.attainable_tflops(1.0, "fp32", "LLC") == pytest.approx(1.0)
    assert r.ridge("fp32") == pytest.approx(100) and r.ridge("fp32", "LLC") == pytest.approx(10)
    with pytest.raises(KeyError, match="bf16"):
        r.peak_tflops("bf16")
    with pytest.raises(ValueError, match="must be > 0"):
        roofline.Roofline("bad", (("fp32", 0.0),), (("DRAM", 1.0),))



def test_sampled_roof_line_draws_the_dense_one():
    # the figure's per-decade samples (+ the ridge), joined straight on log axes, against 2,001 evenly spaced points
    import math

    r = roofline.Roofline("toy", (("fp32", 10.0),), (("DRAM", 300.0),))      # ridge 33.3 FLOP/B, off a decade
    x_range = (1e-2, 1e4)
    xs = froof.line_points(x_range, r.ridge("fp32"))
    assert xs[0] == x_range[0] and xs[-1] == x_range[1] and r.ridge("fp32") in xs and len(xs) == 8
    lx = [math.log10(x) for x in xs]
    ly = [math.log10(r.attainable_tflops(x, "fp32")) for x in xs]
    for i in range(2001):
        x = 10 ** (-2 + 6 * i / 2000)
        j = min(max(0, sum(v <= math.log10(x) for v in lx) - 1), len(xs) - 2)
        t = (math.log10(x) - lx[j]) / (lx[j + 1] - lx[j])
        assert 10 ** (ly[j] + t * (ly[j + 1] - ly[j])) == pytest.approx(r.attainable_tflops(x, "fp32"), rel=1e-9)
    assert froof.line_points(x_range, 1e6) == [10.0 ** k for k in range(-2, 5)]     # ridge off the axis

def test_kernel_counts():
    g = roofline.gemm_kernel(8192, 8192, 8192, "bf16")
    assert g.flop == 2 * 8192**3 and g.traffic_bytes == 2 * 3 * 8192**2
    assert g.intensity == pytest.approx(8192 / 3)
    t = roofline.stream_kernel("triad", 1000, "fp32")
    assert t.flop == 2000 and t.traffic_bytes == 12000
    r = roofline.from_spec(specs.lookup("H200"))
    assert g.bound(r) == "compute" and t.bound(r) == "memory"
    assert t.time_s(r) == pytest.approx(12000 / 4800e9)


def _records():
    return [
        {"kind": "gemm", "method": "mamf", "dtype": "fp32", "m": 512, "n": 512, "k": 512, "shape": "512×512×512",
         "tflops": 0.1, "device": "CPU: x"},
        {"kind": "gemm", "method": "plain", "dtype": "fp32", "m": 512, "n": 512, "k": 512, "shape": "512×512×512",
         "tflops": 0.2, "device": "CPU: x"},
        {"kind": "membw", "op": "triad", "backend": "torch", "level": "memory", "flop": 2000, "size_bytes": 12000,
         "time_s": 1e-6, "bw_GBps": 12.0, "device": "CPU: x"},
        {"kind": "membw", "op": "copy", "backend": "torch", "level": "cache", "flop": 0, "size_bytes": 8000,
         "time_s": 1e-7, "bw_GBps": 80.0, "device": "CPU: x"},
    ]


def test_from_bench_and_measured_kernels():
    r = roofline.from_bench(_records(), "me")
    assert r.peak_tflops("fp32") == 0.1                          # the MAMF record, not the plain one
    assert r.levels == ["DRAM", "LLC"] and r.bw_GBps("LLC") == 80.0
    ks = roofline.kernels_from_bench(_records())
    assert [k.name for k in ks] == ["GEMM fp32 512×512×512", "triad (memory)"]   # copy has no FLOPs
    assert ks[1].achieved_tflops == pytest.approx(2000 / 1e-6 / 1e12)


def test_layer_kernels_match_ops_and_6n_rule():
    ks = layersim.layer_kernels(2, 16, 32, 4, "fp32")
    ops = layersim.layer_ops(2, 16, 32, 4, "fp32")
    assert [k.name for k in ks] == list(ops)
    gemm_flop = sum(k.flop for k in ks if "projection" in k.name or "MLP" in k.name)
    assert gemm_flop == 2 * 32 * 12 * 32 * 32          # forward matmuls = 2 · tokens · 12h² (the "2N" of 6N)
    toy = roofline.Roofline("toy", (("fp32", 0.01),), (("DRAM", 10.0),))
    rows = layersim.compare(ks, toy, ops, repeats=1)
    assert all(r.measured_s > 0 and r.predicted_s > 0 for r in rows)
    tot = layersim.totals(rows)
    assert 0 <= tot["memory_bound_share"] <= 1
    with pytest.raises(ValueError, match="divisible"):
        layersim.layer_kernels(1, 8, 30, 4)
