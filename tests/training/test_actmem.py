import pytest
import torch

from helpers.training.profiling import actmem


def test_checkpointing_keeps_only_the_input():
    m = actmem.measure_block(seq_len=32, micro_batch=2, hidden=64, n_heads=4, checkpoint=True, device="cpu")
    assert m.measured_bytes == m.formula_bytes == 2 * 32 * 2 * 64


@pytest.mark.parametrize("s", [16, 64])
def test_saved_tensors_match_korthikanti_term_by_term(s):
    """Every tensor of sbh(34 + 5as/h) is there; the CPU extras are its 2-byte dropout masks (as²b + 2sbh)
    and LayerNorm's mean/rstd (4 tensors of s·b, 2 bytes each)."""
    b, h, a = 2, 64, 4
    m = actmem.measure_block(seq_len=s, micro_batch=b, hidden=h, n_heads=a, device="cpu")
    extra = a * s * s * b + 2 * s * b * h + 4 * s * b * 2
    assert m.measured_bytes == m.formula_bytes + extra
    assert m.method == "saved-tensors"


def test_precision_bf16_stores_half():
    res = {r.precision: r for r in actmem.precision_compare(n_layers=1, seq_len=16, micro_batch=2, repeats=1,
                                                           device="cpu")}
    assert res["bf16"].activation_bytes * 2 == res["fp32"].activation_bytes
    assert res["bf16-autocast"].activation_bytes > res["bf16"].activation_bytes   # fp32 copies stay around
    if not torch.cuda.is_available():
        assert not res["fp8"].supported and "skipped" in res["fp8"].note


def test_bad_dtype():
    with pytest.raises(ValueError, match="dtype"):
        actmem.measure_block(dtype="int8")
