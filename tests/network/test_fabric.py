"""Topology counts against published designs; routing and placement behave as the chapter says (chapter 24)."""
import networkx as nx
import numpy as np
import pytest

from helpers.network import fabric, routing


@pytest.mark.parametrize("row", fabric.published()["superpod_b200"]["rows"])
def test_superpod_b200_counts_equal_the_reference_architecture(row):
    su, nodes, gpus, leaf, spine, core, node_leaf, leaf_spine, spine_core = row
    c = fabric.superpod_counts(su)
    assert c.endpoints == gpus == nodes * 8
    assert (c.leaf, c.spine, c.core) == (leaf, spine, core)
    cables = [node_leaf, leaf_spine, spine_core]
    assert c.cables == sum(cables)


def test_llama3_24k_cluster():
    d = fabric.llama3_cluster()
    assert d["gpus"] == 24_576 and d["gpus_per_pod"] == 3072
    assert d["cluster_bisection_Tbps"] == pytest.approx(d["pod_uplink_Tbps"] * 4)
    assert d["cluster_bisection_Tbps"] < d["full_bisection_Tbps"] / 6


@pytest.mark.parametrize("nodes", [32, 64, 512])   # whole scalable units of 32 nodes
def test_fat_tree_graph_matches_counts_and_min_cut(nodes):
    G = fabric.fat_tree_graph(nodes)
    c = fabric.fat_tree_counts(nodes * 8)
    kinds = [G.nodes[v]["kind"] for v in G]
    assert kinds.count("leaf") == c.leaf and kinds.count("spine") == c.spine and kinds.count("core") == c.core
    assert sum(d["links"] for _, _, d in G.edges(data=True)) == c.cables
    gpus = [v for v in G if v[0] == "gpu"]
    left = [v for v in gpus if v[1] < nodes // 2]
    right = [v for v in gpus if v[1] >= nodes // 2]
    assert fabric.halves_min_cut(G, left, right) / 400 == len(gpus) / 2


def test_dragonfly_and_torus_formulas_match_graphs():
    for p in (1, 2):
        c, G = fabric.dragonfly_counts(p), fabric.dragonfly_graph(p)
        assert G.number_of_nodes() == c.switches
        assert nx.diameter(G) == 3
        g = 2 * p * p + 1
        half = [v for v in G if v[1] < g // 2]
        rest = [v for v in G if v[1] >= g // 2]
        assert fabric.halves_min_cut(G, half, rest) == (g // 2) * (g - g // 2)
    c, G = fabric.torus_counts(6, 3), fabric.torus_graph(6, 3)
    assert G.number_of_nodes() == c.endpoints == 216 and G.number_of_edges() == 3 * 216
    assert nx.diameter(G) == 9
    left = [v for v in G if v[0] < 3]
    assert fabric.halves_min_cut(G, left, [v for v in G if v[0] >= 3]) == 2 * 36


def test_too_many_endpoints_is_a_clear_error():
    with pytest.raises(ValueError, match="exceed"):
        fabric.fat_tree_counts(100_000, 64)
    with pytest.raises(ValueError):
        fabric.fat_tree_counts(10, 63)


def test_ecmp_collides_adaptive_and_spray_do_not():
    f = routing.LeafSpine(8, 8, 8)
    flows = routing.permutation(f, seed=0)
    e, a, s = (routing.throughput(f, flows, m, seed=0) for m in ("ecmp", "adaptive", "spray"))
    assert s.mean_rate_frac == pytest.approx(1.0)
    assert e.mean_rate_frac < a.mean_rate_frac <= s.mean_rate_frac
    assert e.max_uplink_flows > 1 and a.max_uplink_flows == 1


def test_switch_local_adaptive_sits_between_ecmp_and_the_global_bound():
    f = routing.LeafSpine(8, 8, 8)
    m = {r: np.mean([routing.throughput(f, routing.permutation(f, seed=s), r, seed=s).mean_rate_frac
                     for s in range(3)]) for r in routing.ROUTINGS}
    assert m["ecmp"] < m["adaptive-local"] < m["adaptive"]
    local = routing.throughput(f, routing.permutation(f, seed=0), "adaptive-local", seed=0)
    assert local.max_uplink_flows == 1                  # it balances its own uplinks; downlinks can still collide
    assert routing.ecmp_spine(1, 2, 49152, 8, 0) == routing.ecmp_spine(1, 2, 49152, 8, 0) < 8
    load = {("up", 0, 0): 1, ("down", 1, 3): 5}
    assert routing.adaptive_spine(load, 0, 3, 2) == 0                 # global view: avoids the busy downlink
    assert routing.adaptive_spine(load, 0, 3, 2, local=True) == 1     # the leaf sees only its own busy uplink
    assert len(routing.paths(f, [(0, 63)], "ecmp")[0]) == 4
    with pytest.raises(ValueError, match="routing="):
        routing.paths(f, [(0, 63)], "spray")


def test_max_min_is_fair_on_one_link():
    r = routing.max_min_rates([["x"], ["x"], ["x", "y"]], lambda l: {"x": 3.0, "y": 0.5}[l])
    assert list(r) == pytest.approx([1.25, 1.25, 0.5])


def test_packed_placement_is_fastest():
    f = routing.LeafSpine(8, 4, 8)
    pl = routing.placements(f, 16, seed=0)
    t = {k: routing.ring_allreduce_s(f, h, 1e9, "ecmp", seed=0) for k, h in pl.items()}
    assert t["packed"] <= min(t.values())
    assert t["packed"] == pytest.approx(2 * 15 / 16 * 1e9 / 50e9)
