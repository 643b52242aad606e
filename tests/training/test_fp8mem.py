"""fp8mem: measured storage and saved bytes, the fp8 backward against autograd, the formula against memory.py."""
import pytest
import torch

from helpers.training.profiling import fp8mem
from helpers.training.calc import memory


def test_weight_storage_bytes_are_the_dtype_sizes_plus_one_scale():
    rows = {r.format: r for r in fp8mem.weight_storage((64, 32))}
    assert rows["fp32"].storage_bytes == 64 * 32 * 4
    assert rows["bf16"].storage_bytes == 64 * 32 * 2
    assert rows["fp8-e4m3 + scale"].storage_bytes == 64 * 32 + 4          # the fp32 per-tensor scale
    assert 0 == rows["fp32"].rel_error < rows["bf16"].rel_error < rows["fp8-e4m3 + scale"].rel_error < 0.05


def test_quantize_puts_amax_on_the_format_maximum():
    x = torch.tensor([0.5, -2.0, 1e-3])
    q, s = fp8mem.quantize(x)
    assert q.dtype == torch.float8_e4m3fn and q.float().abs().max().item() == 448.0
    assert torch.allclose(fp8mem.dequantize(q, s), x, rtol=0.07)
    with pytest.raises(ValueError, match="floating-point"):
        fp8mem.quantize(torch.arange(3))


def test_fp8_saved_input_halves_the_bf16_bytes_and_gradients_stay_close():
    bf, f8 = fp8mem.saved_input(tokens=64, d_in=32, d_out=16)
    assert bf.saved_bytes == 64 * 32 * 2 and f8.saved_bytes == 64 * 32 + 4
    assert bf.grad_w_rel_error < f8.grad_w_rel_error < 0.06


def test_fp8_linear_grad_x_is_exact_and_grad_w_matches_dequantized_input():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 4, generator=g, requires_grad=True)
    w = torch.randn(3, 4, generator=g, requires_grad=True)
    fp8mem.Fp8InputLinear.apply(x, w).sum().backward()
    q, s = fp8mem.quantize(x.detach())
    assert torch.allclose(x.grad, torch.ones(8, 3) @ w.detach())
    assert torch.allclose(w.grad, torch.ones(8, 3).t() @ fp8mem.dequantize(q, s), atol=1e-6)


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_bf16_recipe_is_memory_py_formula(stage):
    a = fp8mem.model_states(7.5e9, "bf16 mixed (ZeRO's 16)", stage, 64)
    b = memory.model_states(7.5e9, stage, 64, "mixed-adam")
    assert (a.weights_bytes, a.grads_bytes, a.optimizer_bytes) == (b.weights_bytes, b.grads_bytes, b.optimizer_bytes)


def test_recipe_bytes_per_param():
    t = {r["recipe"]: r["total_B_per_param"] for r in fp8mem.recipe_table()}
    assert t["bf16 mixed (ZeRO's 16)"] == 16 and t["bf16 mixed, fp32 grads"] == 18
    assert t["TE fp8_autocast"] == 17 and t["TE fp8 primary weights"] == 15
    assert fp8mem.Recipe("fp8", False, "bf16", moments="bf16").bytes_per_param()["total"] == 11
    st = fp8mem.model_states(1e9, "TE fp8_autocast", zero_stage=3, dp=10)
    assert st.weights_bytes == 3e8 and st.total_bytes == 1.7e9


def test_bad_inputs_raise_with_the_fix():
    with pytest.raises(ValueError, match="use one of"):
        fp8mem.model_states(1e9, "fp4")
    with pytest.raises(ValueError, match="stage"):
        fp8mem.model_states(1e9, "TE fp8_autocast", zero_stage=4)
    with pytest.raises(ValueError, match="use one of"):
        fp8mem.Recipe("int4", False, "bf16").bytes_per_param()
    with pytest.raises(ValueError, match="2-d"):
        fp8mem.weight_storage((4,))
