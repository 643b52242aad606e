"""helpers.compute.backends: the same work on every engine here (chapter 01, "CPU vs GPU")."""
import pytest

from helpers.compute import backends


def test_engines_and_a_tiny_comparison():
    have, skipped = backends.engines()
    assert {"numpy", "torch-cpu"} <= set(have) and not set(have) & set(skipped)
    recs = backends.compare("matmul", 64, repeats=2, engine_list=["numpy", "torch-cpu"])
    assert [r.engine for r in recs] == ["numpy", "torch-cpu"]
    assert all(r.gflops > 0 and r.bw_GBps > 0 and r.dtype == "float32" for r in recs)
    assert backends.compare("elementwise", 1000, repeats=2, engine_list=["numpy"])[0].n == 1000
    with pytest.raises(ValueError, match="matmul"):
        backends.compare("fft", 8, repeats=1, engine_list=["numpy"])
