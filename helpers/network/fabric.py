"""Cluster fabrics as graphs: rail-optimised fat-tree, dragonfly and torus — switch and cable counts, bisection
bandwidth and diameter, checked against published designs (chapter 24).

* Fat-tree (folded Clos) of radix-k switches, non-blocking: a leaf has k/2 ports down and k/2 up. Two tiers reach
  k²/2 endpoints (leaves = n/(k/2), spines = n/k); three tiers reach k³/4 (spines = n/(k/2), cores = n/k). Each tier
  adds one cable per endpoint. Rail-optimised: GPU r of every node in a scalable unit (SU) goes to the SU's leaf r,
  so same-rail traffic between nodes crosses one switch. The DGX SuperPOD tables follow exactly this arithmetic.
* Dragonfly (Kim et al., ISCA 2008): groups of a routers with p endpoints and h global links each; balanced a = 2p = 2h;
  at most g = a·h + 1 groups, one global link per pair of groups; diameter 3 router-to-router hops (local, global, local).
* Torus (k-ary n-cube): kⁿ nodes, n·kⁿ links, diameter n·⌊k/2⌋, bisection 2·kⁿ⁻¹ links (even k).

Bisection here is the min-cut between the two halves of a natural split (first half of the endpoints vs the rest),
found by ``networkx.minimum_cut`` on the graph and compared with the formula; the true bisection minimises over all
balanced splits, which for these symmetric graphs is the same split.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import networkx as nx
import yaml

DATA = Path(__file__).parent / "data" / "published_fabrics.yaml"


@lru_cache(maxsize=1)
def published() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class FabricCounts:
    topology: str
    endpoints: int
    tiers: int
    leaf: int
    spine: int
    core: int
    switches: int
    cables: int                 # switch-facing cables, endpoint cables included
    bisection_Tbps: float       # one direction, across the halves
    diameter_switch_hops: int   # switches on the longest shortest endpoint-to-endpoint path


def fat_tree_counts(n: int, radix: int = 64, link_Gbps: float = 400.0) -> FabricCounts:
    """Switch and cable counts of a non-blocking fat-tree for ``n`` endpoints (NIC ports) of radix-``radix`` switches."""
    if n < 1 or radix < 4 or radix % 2:
        raise ValueError(f"n={n} ≥ 1 and an even radix ≥ 4 are required (got radix={radix})")
    half = radix // 2
    leaf = math.ceil(n / half)
    if leaf == 1:
        tiers, spine, core = 1, 0, 0
    elif n <= radix * radix // 2:
        tiers, spine, core = 2, math.ceil(n / radix), 0
    elif n <= radix ** 3 // 4:
        tiers, spine, core = 3, leaf, math.ceil(n / radix)
    else:
        raise ValueError(f"{n} endpoints exceed a 3-tier fat-tree of radix {radix} (max {radix ** 3 // 4}): "
                         "use larger switches, a dragonfly, or oversubscribe")
    cables = n * tiers
    return FabricCounts("fat-tree", n, tiers, leaf, spine, core, leaf + spine + core, cables,
                        n / 2 * link_Gbps / 1000, 2 * tiers - 1)


def superpod_counts(su: int, radix: int = 64, gpus_per_node: int = 8, nodes_per_su: int = 32) -> FabricCounts:
    """A DGX SuperPOD-style rail-optimised compute fabric of ``su`` scalable units (one NIC port per GPU)."""
    if su < 1:
        raise ValueError(f"su={su} must be ≥ 1")
    return fat_tree_counts(su * nodes_per_su * gpus_per_node, radix)


def fat_tree_graph(n_nodes: int, gpus_per_node: int = 8, radix: int = 64, nodes_per_su: int = 32,
                   link_Gbps: float = 400.0) -> nx.Graph:
    """The rail-optimised fat-tree as a graph: GPUs ('gpu', node, rail), leaves ('leaf', su, rail), spines, cores.

    Parallel cables between two switches become one edge whose ``links`` counts them (``capacity`` in Gb/s)."""
    n = n_nodes * gpus_per_node
    c = fat_tree_counts(n, radix, link_Gbps)
    G = nx.Graph()
    half = radix // 2

    def link(u, v, k=1):
        if G.has_edge(u, v):
            G[u][v]["links"] += k
        else:
            G.add_edge(u, v, links=k)
        G[u][v]["capacity"] = G[u][v]["links"] * link_Gbps

    per_leaf = min(half, nodes_per_su)          # one leaf per (SU, rail) serves one port per node of the SU
    leaves = []
    for node in range(n_nodes):
        su = node // per_leaf
        for r in range(gpus_per_node):
            leaf = ("leaf", su, r)
            if leaf not in leaves:
                leaves.append(leaf)
            G.add_node(("gpu", node, r), kind="gpu")
            link(("gpu", node, r), leaf)
    for leaf in leaves:
        G.nodes[leaf]["kind"] = "leaf"
    if c.tiers == 2:
        spines = [("spine", j) for j in range(c.spine)]
        for i, leaf in enumerate(leaves):
            for p in range(half):                 # k/2 uplinks per leaf, spread round-robin over the spines
                link(leaf, spines[(i * half + p) % c.spine])
    elif c.tiers == 3:
        pod_leaves = [leaves[i:i + half] for i in range(0, len(leaves), half)]
        n_cores = c.core
        group = max(1, n_cores // half)           # cores reached by spine index j
        for pod, pl in enumerate(pod_leaves):
            for j in range(half):
                sp = ("spine", pod, j)
                for leaf in pl:
                    link(leaf, sp)
                for p in range(half):
                    link(sp, ("core", (j * group + p % group) % n_cores))
    for v in G.nodes:
        G.nodes[v].setdefault("kind", v[0])
    return G


def dragonfly_counts(p: int, link_Gbps: float = 400.0) -> FabricCounts:
    """The largest balanced dragonfly with ``p`` endpoints per router: a = 2p, h = p, g = a·h + 1."""
    if p < 1:
        raise ValueError(f"p={p} must be ≥ 1")
    a, h = 2 * p, p
    g = a * h + 1
    routers, n = a * g, p * a * g
    local, global_ = g * a * (a - 1) // 2, g * (g - 1) // 2
    bis = (g // 2) * (g - g // 2)                  # global links between the two halves of the groups
    return FabricCounts("dragonfly", n, 1, routers, 0, 0, routers, n + local + global_, bis * link_Gbps / 1000, 3)


def dragonfly_graph(p: int) -> nx.Graph:
    """Routers ('r', group, i); router i of group x carries global links to groups in a fixed ('palm-tree') order."""
    a, h = 2 * p, p
    g = a * h + 1
    G = nx.Graph()
    for x in range(g):
        for i in range(a):
            for j in range(i + 1, a):
                G.add_edge(("r", x, i), ("r", x, j), capacity=1.0)
    for x in range(g):
        for k in range(a * h):                     # the k-th global port of group x goes to group x + k + 1
            y = (x + k + 1) % g
            if x < y:
                G.add_edge(("r", x, k // h), ("r", y, (a * h - 1 - k) // h), capacity=1.0)
    return G


def torus_counts(k: int, dims: int = 3, link_Gbps: float = 400.0) -> FabricCounts:
    """A k-ary ``dims``-cube torus (each node an endpoint with its own router, as in TPU pods)."""
    if k < 3 or dims < 1:
        raise ValueError(f"k={k} ≥ 3 and dims={dims} ≥ 1 are required (k = 2 is a hypercube, not a torus)")
    n = k ** dims
    bis = 2 * k ** (dims - 1) if k % 2 == 0 else 2 * k ** (dims - 1)
    return FabricCounts("torus", n, 1, n, 0, 0, n, dims * n, bis * link_Gbps / 1000, dims * (k // 2) + 1)


def torus_graph(k: int, dims: int = 3) -> nx.Graph:
    G = nx.grid_graph(dim=[k] * dims, periodic=True)
    nx.set_edge_attributes(G, 1.0, "capacity")
    return G


def halves_min_cut(G: nx.Graph, left, right) -> float:
    """Capacity of the minimum cut separating the ``left`` nodes from the ``right`` nodes (super source and sink)."""
    H = G.copy()
    for v in left:
        H.add_edge("_S", v, capacity=float("inf"))
    for v in right:
        H.add_edge(v, "_T", capacity=float("inf"))
    value, _ = nx.minimum_cut(H, "_S", "_T")
    return float(value)


def scaling_table(gpu_counts=(1024, 4096, 16384, 32768, 100_000), radix: int = 64):
    """Counts of each topology for each size: fat-tree of radix ``radix`` (128 beyond its reach), the smallest
    balanced dragonfly and 3-D torus with at least that many endpoints."""
    rows = []
    for n in gpu_counts:
        r = radix if n <= radix ** 3 // 4 else 2 * radix
        ft = fat_tree_counts(n, r)
        p = next(p for p in range(1, 64) if dragonfly_counts(p).endpoints >= n)
        k = next(k for k in range(4, 200, 2) if k ** 3 >= n)
        for c, note in ((ft, f"radix {r}"), (dragonfly_counts(p), f"p={p}, a={2 * p}, h={p}"), (torus_counts(k), f"{k}³")):
            rows.append(dict(gpus=n, topology=c.topology, shape=note, endpoints=c.endpoints, switches=c.switches,
                             cables=c.cables, bisection_Tbps=round(c.bisection_Tbps, 1),
                             diameter_switch_hops=c.diameter_switch_hops))
    import pandas as pd

    return pd.DataFrame(rows)


def llama3_cluster() -> dict:
    """GPU count and bisection of the published 24k-GPU RoCE cluster (Llama 3, arXiv:2407.21783 §3.3.1)."""
    d = published()["llama3_24k"]
    pod = d["gpus_per_rack"] * d["racks_per_pod"]
    n = pod * d["pods"]
    pod_bis = pod / 2 * d["link_Gbps"] / 1000
    up_Tbps = pod * d["link_Gbps"] / d["oversubscription"] / 1000     # each pod's uplink to the aggregation layer
    cluster_bis = min(n / 2 * d["link_Gbps"] / 1000, d["pods"] / 2 * up_Tbps)
    return dict(gpus=n, gpus_per_pod=pod, pod_bisection_Tbps=pod_bis, pod_uplink_Tbps=up_Tbps,
                cluster_bisection_Tbps=cluster_bis, full_bisection_Tbps=n / 2 * d["link_Gbps"] / 1000,
                source=d["source"])
