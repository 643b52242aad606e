"""helpers.compute.fp8: formats from torch.finfo, TE's scale formula, per-tensor vs delayed scaling, the fp8 GEMM."""
import pytest
import torch

from helpers.compute import fp8


def test_format_facts_match_the_fp8_paper():
    # Micikevicius et al., "FP8 formats for deep learning" (arXiv:2209.05433), Table 1
    e4, e5 = fp8.format_info("e4m3"), fp8.format_info("e5m2")
    assert (e4.max_value, e4.mantissa_bits, e4.min_normal, e4.min_subnormal) == (448.0, 3, 2**-6, 2**-9)
    assert (e5.max_value, e5.mantissa_bits, e5.min_normal, e5.min_subnormal) == (57344.0, 2, 2**-14, 2**-16)
    with pytest.raises(ValueError, match="format"):
        fp8.format_info("e3m4")


def test_scale_formula_and_degenerate_amax():
    assert fp8.scale_for(4.48, "e4m3") == pytest.approx(100.0)
    assert fp8.scale_for(4.48, "e4m3", margin=1) == pytest.approx(50.0)
    assert fp8.scale_for(0.0, "e4m3") == 1.0 and fp8.scale_for(float("inf"), "e5m2") == 1.0
    with pytest.raises(ValueError, match="margin"):
        fp8.scale_for(1.0, "e4m3", margin=-1)


def test_per_tensor_scaling_rescues_small_and_large_tensors():
    x = torch.randn(4096, generator=torch.Generator().manual_seed(0))
    for s in (1e-4, 1e4):
        errs = {(r.format, r.scaling): r for r in fp8.rounding_errors(x * s)}
        assert errs[("e4m3", "none")].rel_rms_error > 0.3          # underflow (small) or saturation (large)
        assert errs[("e4m3", "per-tensor")].rel_rms_error < 0.04   # 3 mantissa bits: ≈ 2-3 %
        assert errs[("e4m3", "per-tensor")].saturated_fraction == 0
        assert errs[("bf16", "none")].rel_rms_error < errs[("e4m3", "per-tensor")].rel_rms_error
    # the largest element lands exactly on the format's maximum
    q = fp8.quantize_per_tensor(x, "e4m3")
    assert float(q.data.float().abs().max()) == 448.0 and q.saturated == 0


def test_cast_saturates_and_counts():
    q = fp8.cast(torch.tensor([1.0, 500.0, -1e6]), "e4m3")
    assert q.data.float().tolist() == [1.0, 448.0, -448.0] and q.saturated == 2
    with pytest.raises(ValueError, match="scale"):
        fp8.cast(torch.ones(2), "e4m3", scale=0.0)


def test_delayed_equals_per_tensor_on_a_steady_tensor():
    """The optimised recipe against the naive one: with a constant amax they give bit-identical casts from step 2."""
    x = torch.randn(1000, generator=torch.Generator().manual_seed(1)) * 3
    ds = fp8.DelayedScaling("e4m3", history_len=4)
    first = ds.quantize(x)
    assert first.scale == 1.0                                          # TE starts at scale 1
    for _ in range(3):
        d, c = ds.quantize(x), fp8.quantize_per_tensor(x, "e4m3")
        assert d.scale == c.scale and torch.equal(d.data.view(torch.uint8), c.data.view(torch.uint8))


def test_delayed_scaling_saturates_on_a_spike_and_forgets_it_after_the_history():
    g = torch.Generator().manual_seed(2)
    xs = [torch.randn(512, generator=g) for _ in range(12)]
    xs[5] = xs[5] * 10                                                 # an outlier step
    steps = fp8.compare_scaling(xs, "e4m3", history_len=3, margin=1)      # one power of two of headroom
    assert steps[5].saturated_delayed > 0                              # the scale came from smaller amaxes
    assert all(s.saturated_delayed == 0 for s in steps[1:5] + steps[6:])
    assert steps[6].scale_delayed < steps[4].scale_delayed             # the spike is in the history …
    assert steps[9].scale_delayed == pytest.approx(steps[4].scale_delayed, rel=0.3)   # … and out of it again
    with pytest.raises(ValueError, match="history_len"):
        fp8.DelayedScaling(history_len=0)
    with pytest.raises(ValueError, match="algo"):
        fp8.DelayedScaling(algo="mean")


def test_fp8_matmul_matches_the_dequantised_product():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(32, 48, generator=g), torch.randn(48, 16, generator=g)
    out = fp8.fp8_matmul(a, b, out_dtype=torch.float32)
    qa, qb = fp8.quantize_per_tensor(a), fp8.quantize_per_tensor(b.t().contiguous())
    emulated = qa.dequantize() @ qb.dequantize().t()
    assert torch.allclose(out, emulated, rtol=1e-4, atol=1e-4)
    assert 0.005 < fp8.rel_error(out, a @ b) < 0.08
    with pytest.raises(ValueError, match="shapes"):
        fp8.fp8_matmul(a, a)


def test_gemm_compare_on_cpu_is_error_only():
    recs = fp8.gemm_compare(64, device="cpu")
    by = {r.dtype: r for r in recs}
    assert by["fp8-e4m3"].rel_error_vs_fp32 > by["bf16"].rel_error_vs_fp32 > 0
    assert all(r.time_s is None and "not timed" in r.timing_note for r in recs)
    with pytest.raises(ValueError, match="multiple of 16"):
        fp8.gemm_compare(100, device="cpu")


def test_cli_error_and_gemm(tmp_path, capsys):
    import json

    out = tmp_path / "e.json"
    assert fp8.main(["error", "--numel", "1024", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "fp8_error" and len(doc["records"]) == 5
    assert fp8.main(["gemm", "--n", "32", "--json"]) == 0
    assert '"fp8_gemm"' in capsys.readouterr().out
