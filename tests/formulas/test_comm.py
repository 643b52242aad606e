"""helpers.formulas.comm: α–β costs of collectives (Thakur et al. 2005; NCCL's trees) and nccl-tests' bus-bandwidth
factors (doc/PERFORMANCE.md), and every old copy's call site giving the same numbers."""
import math

import pytest

from helpers.formulas import comm

LINK = comm.AlphaBeta.from_link(latency_us=5, bw_GBps=50)


def test_ring_terms():
    unit = comm.AlphaBeta(1.0, 1.0)
    # Thakur et al. 2005: ring all-reduce 2(p-1)α + 2(p-1)/p·nβ; all-gather and reduce-scatter half of each term
    assert comm.ring_s(8.0, 4, unit) == 2 * 3 + 2 * 3 / 4 * 8
    assert comm.all_gather_s(8.0, 4, unit) == comm.reduce_scatter_s(8.0, 4, unit) == 3 + 3 / 4 * 8
    assert comm.all_gather_s(8.0, 4, unit) + comm.reduce_scatter_s(8.0, 4, unit) == comm.ring_s(8.0, 4, unit)
    assert comm.ring_allreduce_bytes(1e9, 8) == pytest.approx(1.75e9)
    assert comm.ring_bw_s(1e9, 8, 50) == pytest.approx(1.75e9 / 50e9) and comm.ring_bw_s(1e9, 1, 50) == 0
    with pytest.raises(ValueError, match="whole number"):
        comm.ring_s(1e6, 0, LINK)


def test_ring_is_bandwidth_optimal_and_busbw_is_link_bandwidth():
    n, p = 1e10, 16
    t = comm.ring_s(n, p, LINK)
    assert comm.busbw_GBps(n, t, p) == pytest.approx(50, rel=1e-3)      # busbw → the link's bandwidth


def test_trees_latency_and_bandwidth_limits():
    p = 64
    small, big = 8.0, 1e10
    # latency: trees take 2·log2(p) steps, the ring 2(p-1)
    assert comm.binomial_tree_s(small, p, LINK) < comm.ring_s(small, p, LINK) / 5
    assert comm.double_binary_tree_s(small, p, LINK) < comm.ring_s(small, p, LINK) / 5
    # bandwidth: the double binary tree approaches the ring; one pipelined tree needs 1.5x; binomial log2(p)x
    r = comm.ring_s(big, p, LINK)
    assert comm.double_binary_tree_s(big, p, LINK) / r == pytest.approx(p / (p - 1), rel=0.05)
    assert comm.pipelined_tree_s(big, p, LINK) / r == pytest.approx(1.5 * p / (p - 1), rel=0.05)
    assert comm.binomial_tree_s(big, p, LINK) / r == pytest.approx(math.log2(p) * p / (p - 1), rel=0.01)
    assert comm.allreduce_s("ring", big, p, LINK) == r
    with pytest.raises(ValueError, match="choose one of"):
        comm.allreduce_s("butterfly", big, p, LINK)


def test_hierarchical_moves_only_a_gth_across_nodes():
    intra, inter = comm.AlphaBeta.from_link(2, 450), comm.AlphaBeta.from_link(5, 50)
    n, g, nodes = 1e10, 8, 16
    h = comm.hierarchical_s(n, g, nodes, intra, inter)
    flat = comm.flat_ring_s(n, g, nodes, intra, inter)
    assert h < flat / 4
    assert comm.flat_ring_s(n, g, 1, intra, inter) == comm.ring_s(n, g, intra)


def test_busbw_factors_match_performance_md():
    # nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, broadcast 1
    assert comm.busbw_factor("all_reduce", 8) == pytest.approx(1.75)
    assert comm.busbw_factor("all_gather", 8) == comm.busbw_factor("reduce_scatter", 8) == pytest.approx(0.875)
    assert comm.busbw_factor("alltoall", 4) == comm.busbw_factor("all_to_all", 4) == pytest.approx(0.75)
    assert comm.busbw_factor("broadcast", 16) == comm.busbw_factor("reduce", 16) == 1.0
    assert comm.busbw_factor("all_reduce", 1) == 0.0
    with pytest.raises(ValueError, match="known collectives"):
        comm.busbw_factor("allreduce", 2)


def test_old_call_sites_give_the_same_numbers():
    """commmodel, collectives, nccltests, sparsify, routing and the planner had their own copies (HEAD c421e96)."""
    from helpers.network import commmodel, routing, sparsify

    assert {a: comm.allreduce_s(a, 1e7, 64, LINK) for a in comm.ALGORITHMS} == pytest.approx(
        {"ring": 0.00102375, "binomial_tree": 0.00246, "pipelined_tree": 0.0010183333333333331,
         "double_binary_tree": 0.0007516666666666665}, rel=1e-15)
    nvlink, nic = comm.AlphaBeta.from_link(0, 450), comm.AlphaBeta.from_link(0, 50)
    assert comm.hierarchical_s(2**30, 8, 16, nvlink, nic) == pytest.approx(0.009208827448888889, rel=1e-15)
    assert comm.flat_ring_s(2**30, 8, 16, nvlink, nic) == pytest.approx(0.04261412864, rel=1e-15)
    assert comm.busbw_GBps(1e10, comm.ring_s(1e10, 16, LINK), 16) == pytest.approx(49.98000799680128, rel=1e-14)
    assert commmodel.crossover_bytes("ring", "double_binary_tree", 64, comm.AlphaBeta.from_link(10, 50)) == \
        pytest.approx(69565217.39130428, rel=1e-12)
    assert sparsify.ring_allreduce_bytes(7e9, 64) == 55125000000.0
    f = routing.LeafSpine(leaves=4, spines=2, hosts_per_leaf=4)
    t = routing.ring_allreduce_s(f, [0, 4, 8, 12, 1], 1e9, "ecmp", background=[(2, 6), (3, 7), (5, 13)], seed=3)
    assert t == pytest.approx(0.064, rel=1e-15)
