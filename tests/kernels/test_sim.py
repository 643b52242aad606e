"""helpers.kernels.simt: kernels in numba's CUDA simulator, checked against numpy, with their accesses counted."""
import numpy as np
import pytest

from helpers.kernels import simt


def test_naive_matmul_coalesced_vs_strided_counts():
    r, st = simt.run("naive", 32)
    rs, sts = simt.run("naive_strided", 32)
    assert r.correct and rs.correct and r.global_loads == rs.global_loads == 2 * 32**3
    by = {(s.array, s.op): s for s in st}
    bys = {(s.array, s.op): s for s in sts}
    # 16×16 block: a warp is 2 rows of 16 threads. B[k, col]: 2 rows of 16 consecutive floats = 2 sectors of 64 B
    assert by[("B", "load")].sectors_per_request == 2 and by[("B", "load")].efficiency_pct == 100
    # C stores: 2 × 64 contiguous bytes = 4 sectors, fully used
    assert by[("C", "store")].sectors_per_request == 4 and by[("C", "store")].efficiency_pct == 100
    # swapped mapping: threadIdx.x walks rows, so A[row, k] touches 16 rows = 16 sectors per request
    assert bys[("A", "load")].sectors_per_request == 16 and bys[("C", "store")].sectors_per_request == 16
    assert rs.global_sectors > 4 * r.global_sectors


def test_tiled_loads_each_element_tile_times_fewer_and_no_bank_conflicts():
    r, st = simt.run("tiled", 32)
    naive, _ = simt.run("naive", 32, trace=True)
    assert r.correct and naive.global_loads == simt.TILE * r.global_loads
    shared = [s for s in st if s.space == "shared"]
    assert {s.array for s in shared} == {"shared sA", "shared sB"}
    assert all(s.bank_ways_max == 1 for s in shared)


def test_transpose_bank_conflicts_and_padding():
    _, st = simt.run("transpose", 32)
    _, stp = simt.run("transpose_padded", 32)
    col = next(s for s in st if s.space == "shared" and s.op == "load")
    colp = next(s for s in stp if s.space == "shared" and s.op == "load")
    assert col.bank_ways_max == 32 and colp.bank_ways_max == 1


def test_analyse_counts_a_hand_built_log():
    log = simt.AccessLog()
    arr = simt.Traced("x", np.zeros(64, np.float32), "shared", log)
    log.rows = [("x", "shared", (0, 0, 0), t, 0, 4 * 32 * t, False) for t in range(32)]   # stride 32 words
    (s,) = simt.analyse(log, "k", 32)
    assert s.bank_ways_max == 32 and s.requests == 1 and arr.shape == (64,)
    with pytest.raises(ValueError, match="block_threads"):
        simt.analyse(log, "k", 0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="kernel='nope'"):
        simt.run("nope")
    with pytest.raises(ValueError, match="multiple of 16"):
        simt.run("tiled", 40)


def test_warp_request_counts():
    assert simt.warp_request(1).sectors_per_request == 4 and simt.warp_request(1).efficiency_pct == 100
    assert simt.warp_request(32).sectors_per_request == 32 and simt.warp_request(0).sectors_per_request == 1
    assert simt.warp_request(1, itemsize=8).sectors_per_request == 8
    assert simt.warp_request(2, space="shared").bank_ways_max == 2
    assert simt.warp_request(33, space="shared").bank_ways_max == 1      # the padded column
    with pytest.raises(ValueError, match="itemsize=3"):
        simt.warp_request(1, itemsize=3)


def test_reduction_trees_and_bfs():
    from helpers.kernels import simalgos

    runs = {k: simalgos.reduce(k, 256) for k in simalgos.KERNELS}
    assert all(r.correct for r in runs.values())
    assert runs["interleaved"].shared_requests > runs["sequential"].shared_requests
    assert runs["interleaved"].active_lanes_mean < runs["sequential"].active_lanes_mean
    assert runs["strided"].bank_ways_max > 1 == runs["sequential"].bank_ways_max
    r, level = simalgos.bfs(n=40, p=0.1)
    assert r.matches_networkx and level[0] == 0 and r.levels == r.max_level
    with pytest.raises(ValueError, match="kernel='x'"):
        simalgos.reduce("x")
