"""helpers.kernels.gpukernels / gpulaunch and the cupy STREAM kernels: parsers and guards on a CPU, the kernels
themselves on a GPU (skipped here), and an optional NVRTC compile check of every CUDA C source for sm_90."""
import ctypes
import glob
import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers.compute import streamkernels
from helpers.kernels import gpukernels, gpulaunch

REAL = Path(__file__).parents[1] / "data" / "real" / "ptxas"


def test_parse_ptxas_v_on_real_logs():
    k = gpulaunch.parse_ptxas_v((REAL / "kmcuda_issue25_sm61.txt").read_text())
    assert len(k) == 3                                       # the first Used line has no entry name: dropped
    assert k["_Z15knn_assign_gmemIL20KMCUDADistanceMetric0EfEvjjtPKfS2_PKT0_S5_PKjS7_S7_Pj"]["registers"] == 40
    r = k["_Z25knn_calc_cluster_radiusesIL20KMCUDADistanceMetric1EfEvjjPKjS2_PKT0_S5_PfS6_"]
    assert r == {"registers": 27, "smem_bytes": 32768, "spill_store_bytes": 0}
    s = gpulaunch.parse_ptxas_v((REAL / "smfft_issue1_sm70.txt").read_text())
    assert [v["smem_bytes"] for v in s.values()] == [2112, 2112]
    c = gpulaunch.parse_ptxas_v((REAL / "ccminer_pr36_sm50.txt").read_text())
    big = c["_Z14digit_last_wdcILj9ELj1248ELi9ELj2E13packer_cantorLj64ELj8ELj4EEvP4equiIXT_EXT0_EE"]
    assert big == {"registers": 255, "smem_bytes": 8192, "spill_store_bytes": 176} and len(c) == 2


def test_guards_without_gpu():
    if gpukernels.available() is None:
        pytest.skip("a GPU is here: the guards are not reached")
    with pytest.raises(RuntimeError, match="H200"):
        gpukernels.memory_experiments()
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        gpulaunch.graph_vs_eager()
    with pytest.raises(RuntimeError):
        streamkernels.verify_cupy()
    with pytest.raises(ValueError, match="sms=0"):
        streamkernels.cupy_blocks(0)


@pytest.mark.skipif(gpukernels.available() is not None, reason="needs cupy and a CUDA GPU")
def test_gpu_kernels_correct():
    assert all(e < 1e-5 for e in streamkernels.verify_cupy().values())
    recs = gpukernels.memory_experiments(n=2**20) + gpukernels.compute_experiments(2**20, 2**20, 256)
    assert all(r.correct for r in recs), [r for r in recs if not r.correct]
    g = gpulaunch.graph_vs_eager(n_kernels=5, repeats=3)
    assert g[1].correct


def _nvrtc():
    cands = [os.environ.get("BOOK_NVRTC", "")] + glob.glob("/tmp/nvrtc/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    try:
        import nvidia.cuda_nvrtc as pkg  # noqa: F401 — the pip wheel nvidia-cuda-nvrtc-cu12, if installed
        cands += glob.glob(str(Path(pkg.__path__[0]) / "lib" / "libnvrtc.so*"))
    except ImportError:
        pass
    for c in cands:
        if c and Path(c).exists():
            return ctypes.CDLL(c)
    return None


@pytest.mark.skipif(_nvrtc() is None, reason="NVRTC not installed (pip nvidia-cuda-nvrtc-cu12, or BOOK_NVRTC=path)")
@pytest.mark.parametrize("src", [streamkernels.SRC, gpukernels.SRC, gpulaunch.SAXPY], ids=["stream", "gpu", "saxpy"])
def test_cuda_sources_compile_for_sm90(src, tmp_path):
    lib = _nvrtc()
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * 2)(b"--gpu-architecture=compute_90", b"-std=c++14")
    rc = lib.nvrtcCompileProgram(prog, 2, opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    assert rc == 0, log.value.decode()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    import triton
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    text = re.sub(r"^\.version \d+\.\d+", ".version 8.7", ptx.value.decode(), flags=re.M)  # triton's ptxas is 12.8
    (tmp_path / "k.ptx").write_text(text)
    p = subprocess.run([str(ptxas), "-arch=sm_90", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    used = gpulaunch.parse_ptxas_v(p.stdout + p.stderr)
    assert used and all(v["registers"] <= 64 for v in used.values())
    if src is streamkernels.SRC:                 # __launch_bounds__(256, 8): 8 resident blocks need ≤ 32 registers
        assert all(v["registers"] <= 32 for v in used.values())


def test_matmul_steps_checked_before_any_gpu_work():
    """The matmul progression (and ncu's matmul_* workloads) name their steps; a wrong one fails with the list."""
    import pytest
    from helpers.compute import ncu
    from helpers.kernels import gpukernels
    with pytest.raises(ValueError, match="one of"):
        gpukernels.matmul_call("strassen", 4096)
    with pytest.raises(ValueError, match="multiple of 16"):
        gpukernels.matmul_call("naive", 100)
    assert {f"matmul_{k}" for k in ("naive_fp32", "tiled_fp32", "cublas_fp32", "triton_bf16", "cublas_bf16")} <= set(ncu.workloads())
