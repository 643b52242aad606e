"""helpers.figures.kernels: the memory-hierarchy, access, GEMM-roofline, stream-timeline and occupancy figures."""
from types import SimpleNamespace

import pytest

from helpers.figures import kernels as kernfig
from helpers.kernels import occupancy

PROPS = {"name": "H200", "sm_count": 132, "regs_per_sm": 65536, "shared_mem_per_sm_bytes": 233472,
         "l2_cache_bytes": 60 * 2**20, "total_memory_bytes": 141 * 10**9}


def test_memory_hierarchy_bars_and_refusal():
    fig = kernfig.memory_hierarchy(PROPS, hbm_GBps=4800.0)
    assert list(fig.data[0].x) == ["registers", "shared memory / L1", "L2 cache", "HBM"]
    assert fig.data[0].y[0] == 65536 * 4 * 132 and fig.layout.yaxis.type == "log"
    with pytest.raises(ValueError, match="gpu_properties"):
        kernfig.memory_hierarchy({"sm_count": 132})


def test_accesses_split_global_and_shared():
    s = lambda space, arr, sec, ways: SimpleNamespace(kernel="k", array=arr, space=space, op="load",  # noqa: E731
                                                      sectors_per_request=sec, bank_ways_max=ways)
    fig = kernfig.accesses([s("global", "a", 4.0, None), s("global", "b", 32.0, None), s("shared", "t", None, 2)])
    assert list(fig.data[0].y) == [4.0, 32.0] and list(fig.data[1].y) == [2]


def test_gemm_roofline_places_each_record():
    recs = [{"dtype": "bf16", "m": 4096, "n": 4096, "k": 4096, "tflops": 700.0, "method": "mamf", "shape": "4096³"}]
    fig = kernfig.gemm_roofline(recs, {"bf16": 989.0, "fp8": 1979.0}, 4800.0, "test")
    assert [t.name for t in fig.data] == ["bf16 roof", "fp8 roof", "bf16 measured"]
    assert fig.data[-1].x[0] == pytest.approx(2 * 4096**3 / (2 * 2 * 4096**2 + 2 * 4096**2))
    assert max(fig.data[0].y) == pytest.approx(989.0)


def test_timeline_splits_copies_from_kernels():
    rows = [(7, "Memcpy HtoD", 0.0, 50.0), (8, "add_kernel", 10.0, 30.0), (7, "Memcpy HtoD", 50.0, 50.0)]
    fig = kernfig.timeline(rows, "test")
    assert [t.name for t in fig.data] == ["host→device copy", "kernel"] and len(fig.data[0].x) == 2


def test_occupancy_sweep_bar_per_block_size():
    res = occupancy.sweep("H200", 32, 0, block_sizes=(64, 256))
    fig = kernfig.occupancy_sweep(res, "test")
    assert list(fig.data[0].x) == ["64", "256"] and list(fig.data[0].y) == [o.active_warps for o in res]
