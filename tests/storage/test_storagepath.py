"""helpers.storage.storagepath: hop arithmetic, the six standard paths, near-storage pushdown (chapter 23)."""
import pytest

from helpers.storage import storagepath as sp


def test_paths_copies_and_dram_traffic():
    paths = {p.name: p for p in sp.standard_paths(memcpy_GBps=10.0, n_drives=8)}
    res = {n: sp.evaluate(p, 10**10) for n, p in paths.items()}
    gds = res["local NVMe, GPUDirect Storage"]
    bounce = res["local NVMe, buffered read + pageable cudaMemcpy"]
    direct = res["local NVMe, O_DIRECT into pinned buffer"]
    assert gds.cpu_copies == 0 and gds.host_dram_bytes_per_byte == 0 and gds.hops == 1
    assert bounce.cpu_copies == 2 and bounce.host_dram_bytes_per_byte == 1 + 2 + 2 + 1
    assert direct.cpu_copies == 0 and direct.host_dram_bytes_per_byte == 2
    assert bounce.bottleneck_GBps == 10.0 and bounce.time_s == pytest.approx(1.0)
    assert res["NFS over TCP, buffered, then GPU"].cpu_copies == 3
    assert res["NVMe-oF + GPUDirect Storage (RDMA into GPU)"].host_dram_bytes_per_byte == 0


def test_dram_budget_caps_the_path():
    p = sp.standard_paths(memcpy_GBps=100.0, n_drives=16)[0]
    r = sp.evaluate(p, 10**9, host_dram_GBps=60.0)
    assert r.effective_GBps == pytest.approx(10.0)


def test_broken_chain_and_bad_numbers_are_named():
    with pytest.raises(ValueError, match="followed by"):
        sp.StoragePath("x", (sp.Hop("a", "b", sp.DMA, 1, "l"), sp.Hop("c", "d", sp.DMA, 1, "l")))
    with pytest.raises(ValueError, match="bw_GBps=0"):
        sp.StoragePath("x", (sp.Hop("a", "b", sp.DMA, 0, "l"),))
    with pytest.raises(ValueError, match="memcpy_GBps"):
        sp.standard_paths(memcpy_GBps=0)


def test_pushdown():
    host, near = sp.pushdown(10**12, 0.01, link_GBps=10, storage_scan_GBps=20, host_scan_GBps=100)
    assert host.time_s == pytest.approx(100) and near.time_s == pytest.approx(50)
    assert near.bytes_moved == 10**10
    with pytest.raises(ValueError, match="selectivity"):
        sp.pushdown(1, 1.5, 1, 1, 1)


def test_memcpy_measurement_positive():
    assert sp.measure_memcpy_GBps(2**20, repeats=2) > 0
