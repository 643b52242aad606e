"""helpers.kernels.tritonk: Triton kernels (interpreter on a CPU) against torch, and sm_90 PTX/SASS without a GPU."""
import pytest
import torch

from helpers.kernels import tritonk


def test_kernels_match_torch():
    recs = tritonk.check_all(seed=0)
    assert [r.kernel for r in recs] == ["vector add", "fused softmax", "tiled matmul"]
    assert all(r.correct for r in recs), recs


def test_partial_blocks_are_masked():
    dev = "cuda" if torch.cuda.is_available() else "cpu"   # compiled on a GPU, the interpreter on a CPU
    x, y = torch.arange(1000.0, device=dev), torch.ones(1000, device=dev)
    torch.testing.assert_close(tritonk.add(x, y, block=256), x + 1)
    a, b = torch.randn(40, 24, device=dev), torch.randn(24, 48, device=dev)
    torch.testing.assert_close(tritonk.matmul(a, b, 16, 16, 16), a @ b, rtol=1e-4, atol=1e-4)


def test_bad_shapes():
    with pytest.raises(ValueError, match="do not chain"):
        tritonk.matmul(torch.ones(4, 5), torch.ones(4, 5))
    with pytest.raises(ValueError, match="kernel='mul'"):
        tritonk.compile_for("mul")


def test_compile_for_hopper_gives_ptx_sass_and_registers():
    plain = tritonk.compile_for("add", aligned=False)
    vec = tritonk.compile_for("add", aligned=True)
    assert plain.arch == "sm_90a" and ".target sm_90a" in plain.ptx
    assert plain.registers_per_thread and 0 < plain.registers_per_thread <= 255
    assert "LDG.E" in plain.global_loads and "LDG.E.128" in vec.global_loads        # alignment → 128-bit loads
    assert "ld.global.v4" in tritonk.ptx_excerpt(vec.ptx)
