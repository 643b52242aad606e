"""helpers.kernels.fusion: eager op counts (dispatch mode) and Inductor's generated kernels."""
import torch

from helpers.kernels import fusion


def test_eager_ops_and_bytes_are_counted():
    x, w, b = fusion.inputs(4, 8)
    ops = fusion.eager_ops(fusion.gelu_bias_softmax, x, w, b)
    assert [name for name, _ in ops] == ["mul", "add", "gelu", "_softmax"]
    assert ops[0][1] == (32 + 8 + 32) * 4          # x (4×8) and w (8) read, 4×8 written, fp32


def test_compile_fuses_layernorm_chain():
    torch.set_num_threads(1)
    r = fusion.measure("layernorm_residual", rows=16, cols=32, repeats=2)
    assert r.eager_kernels > r.compiled_kernels >= 1 and r.max_abs_err < 1e-4
    assert r.eager_bytes > r.fused_floor_bytes == (16 * 32 + 32 + 32 + 16 * 32) * 4
