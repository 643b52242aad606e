"""helpers.formulas.dtypes: bytes per element, checked against the formats' definitions and torch's own sizes."""
import pytest
import torch

from helpers.formulas import dtypes


def test_table_matches_the_formats():
    # IEEE 754-2008 binary64/32/16: 64, 32, 16 bits; bfloat16 (arXiv:1905.12322): 16 bits; FP8 (arXiv:2209.05433): 8
    assert [dtypes.bytes_per_element(d) for d in ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8")] == [8, 4, 4, 2, 2, 1]
    assert list(dtypes.BYTES_PER_ELEMENT)[:3] == ["fp64", "fp64_tc", "fp32"]        # widest first: the roofline's order


@pytest.mark.parametrize("name", sorted(dtypes.ALIASES))
def test_torch_names_and_dtypes_agree_with_torch(name):
    tdt = getattr(torch, name, None)
    if not isinstance(tdt, torch.dtype):
        pytest.skip(f"torch has no dtype {name!r}")
    want = torch.empty(0, dtype=tdt).element_size()
    assert dtypes.bytes_per_element(name) == want == dtypes.bytes_per_element(tdt)


def test_unknown_dtype_names_the_known_ones():
    with pytest.raises(ValueError, match="use one of"):
        dtypes.bytes_per_element("int4")
    assert dtypes.canonical("torch.bfloat16") == dtypes.canonical("BF16") == "bf16"


def test_old_call_sites_give_the_same_numbers():
    """compute.roofline's kernels and fp8mem's recipes counted bytes from their own tables before (HEAD c421e96)."""
    from helpers.compute import roofline
    from helpers.training.profiling import fp8mem

    k = roofline.gemm_kernel(8192, 8192, 8192, "bf16")
    assert (k.flop, k.traffic_bytes) == (1099511627776.0, 402653184.0)
    k = roofline.gemm_kernel(1, 8192, 8192, "fp8")
    assert (k.flop, k.traffic_bytes) == (134217728.0, 67125248.0)
    assert roofline.stream_kernel("triad", 2**28).traffic_bytes == 3221225472.0
    assert roofline.elementwise_kernel("ln", 2**24, 8, 2, "bf16").traffic_bytes == 67108864
    totals = {name: r.bytes_per_param()["total"] for name, r in fp8mem.RECIPES.items()}
    assert totals["bf16 mixed (ZeRO's 16)"] == 16 and totals["TE fp8_autocast"] == 17
    assert totals["TE fp8 primary weights"] == 15 and totals["TE fp8_autocast, fp32 grads"] == 19
