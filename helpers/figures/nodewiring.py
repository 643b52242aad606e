"""Chapter 02: how GPUs are wired inside a server and across a fabric, drawn and measured as graphs.

    from helpers.figures import nodewiring as nw
    g = nw.node_graph("nvswitch")            # 8 GPUs, 4 PCIe switches, 2 CPUs, 8 NICs, 6 NVSwitches (DGX A100 layout)
    nw.bisection_GBps(g)                      # max flow from GPUs 0-3 to GPUs 4-7 over the GPU data path, GB/s
    nw.node_figure(g)                         # the drawing
    nw.topology_heatmap(topology.sample())    # `nvidia-smi topo -m` as a coloured matrix
    nw.fat_tree(4096, radix=64)               # switches and cables of a non-blocking fat-tree

Capacities are GB/s (10^9 B/s) in one direction. PCIe links use ``specs.pcie_GBps``; NVLink 3 gives an A100
12 links × 25 GB/s = 300 GB/s each way (600 GB/s both ways, as the A100 datasheet prints it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from helpers.core import specs, topology

KIND_STYLE = {"pcie": ("#1f5f8b", "PCIe"), "nvlink": ("#3a9b5c", "NVLink"), "socket": ("#c0392b", "CPU–CPU link")}


def node_graph(design: str = "nvswitch", pcie_gen: int = 4, nvlink_GBps: float = 300.0, nvswitches: int = 6,
               inter_socket_GBps: float | None = None):
    """An 8-GPU server as a networkx Graph (edge ``capacity`` in GB/s per direction, ``kind`` pcie/nvlink/socket).

    Both designs share the host side of a DGX A100: two CPUs, four PCIe switches, each holding two GPUs and two
    NICs. ``"nvswitch"`` adds the GPU fabric: every GPU has ``nvlink_GBps`` spread over ``nvswitches`` switches.
    ``"pcie-switch"`` has none, so GPU-to-GPU traffic crosses PCIe (and the CPUs between switches).
    ``inter_socket_GBps=None`` leaves the CPU–CPU link unconstrained: results are then upper bounds."""
    import networkx as nx

    if design not in ("nvswitch", "pcie-switch"):
        raise ValueError(f"design={design!r}: use 'nvswitch' (DGX A100 style) or 'pcie-switch'")
    lane = specs.pcie_GBps(pcie_gen, 16)
    g = nx.Graph(design=design)
    for c in range(2):
        g.add_node(f"CPU{c}", kind="cpu", pos=(1.5 + 4 * c, 3.6))
    if inter_socket_GBps is None:
        g.add_edge("CPU0", "CPU1", kind="socket")                      # no capacity attribute = unlimited
    else:
        g.add_edge("CPU0", "CPU1", kind="socket", capacity=float(inter_socket_GBps))
    for s in range(4):
        sw = f"PCIe-SW{s}"
        g.add_node(sw, kind="pcie switch", pos=(2 * s + 0.5, 2.4))
        g.add_edge(sw, f"CPU{s // 2}", kind="pcie", capacity=lane)
        for j in (2 * s, 2 * s + 1):
            g.add_node(f"GPU{j}", kind="gpu", pos=(float(j), 1.2))
            g.add_node(f"NIC{j}", kind="nic", pos=(j + (0.25 if j % 2 else -0.25), 3.0))
            g.add_edge(f"GPU{j}", sw, kind="pcie", capacity=lane)
            g.add_edge(f"NIC{j}", sw, kind="pcie", capacity=lane)
    if design == "nvswitch":
        if nvswitches < 1 or not nvlink_GBps > 0:
            raise ValueError(f"nvswitches={nvswitches!r} must be ≥ 1 and nvlink_GBps={nvlink_GBps!r} > 0")
        for k in range(nvswitches):
            g.add_node(f"NVSwitch{k}", kind="nvswitch", pos=(7 * (k + 0.5) / nvswitches, 0.0))
            for j in range(8):
                g.add_edge(f"GPU{j}", f"NVSwitch{k}", kind="nvlink", capacity=nvlink_GBps / nvswitches)
    return g


def _data_path(g, kinds):
    """The directed graph of the links GPU-to-GPU traffic may use (NVLink when the server has it)."""
    import networkx as nx

    if kinds is None:
        has_nv = any(k == "nvlink" for _, _, k in g.edges(data="kind"))
        kinds = {"nvlink"} if has_nv else {"pcie", "socket"}
    d = nx.DiGraph()
    for a, b, data in g.edges(data=True):
        if data["kind"] in kinds:
            d.add_edge(a, b, **data)
            d.add_edge(b, a, **data)
    return d


def bisection_GBps(g, half_a=None, half_b=None, kinds=None) -> float:
    """Max flow (GB/s, one direction) from one half of the GPUs to the other: how fast half the server can send
    to the other half at once. Defaults: GPUs 0-3 → 4-7, over NVLink if present, else PCIe and the CPUs."""
    import networkx as nx

    gpus = sorted((n for n, k in g.nodes(data="kind") if k == "gpu"), key=lambda s: int(s[3:]))
    half_a = list(half_a or gpus[: len(gpus) // 2])
    half_b = list(half_b or gpus[len(gpus) // 2:])
    d = _data_path(g, kinds)
    for n in half_a:
        d.add_edge("_src", n)            # unlimited
    for n in half_b:
        d.add_edge(n, "_dst")
    return float(nx.maximum_flow_value(d, "_src", "_dst"))


def pair_bandwidth(g, kinds=None):
    """GPU×GPU table of max flow between one pair at a time (GB/s, one direction), nothing else running."""
    import networkx as nx
    import pandas as pd

    gpus = sorted((n for n, k in g.nodes(data="kind") if k == "gpu"), key=lambda s: int(s[3:]))
    d = _data_path(g, kinds)
    m = {a: {b: (math.nan if a == b else nx.maximum_flow_value(d, a, b)) for b in gpus} for a in gpus}
    return pd.DataFrame(m).T.loc[gpus, gpus]


def node_figure(g, title: str | None = None):
    """Draw ``node_graph``: line colour by link kind, width growing with capacity."""
    from helpers.core import plotting

    fig = plotting.figure(title=title or f"8-GPU server, {g.graph.get('design')} design", height=460)
    for kind, (colour, label) in KIND_STYLE.items():
        edges = [(a, b, c) for a, b, k in g.edges(data="kind") if k == kind for c in [g.edges[a, b].get("capacity")]]
        for i, (a, b, cap) in enumerate(edges):
            (xa, ya), (xb, yb) = g.nodes[a]["pos"], g.nodes[b]["pos"]
            width = 1.5 if cap is None else 1 + math.log2(1 + cap / 16)
            fig.add_scatter(x=[xa, xb], y=[ya, yb], mode="lines", line=dict(color=colour, width=width),
                            name=label, legendgroup=kind, showlegend=i == 0,
                            hovertext=f"{a}–{b}: {'unconstrained' if cap is None else f'{cap:.1f} GB/s'}",
                            hoverinfo="text")
    symbols = {"cpu": "square", "pcie switch": "diamond", "gpu": "circle", "nic": "triangle-up",
               "nvswitch": "hexagon"}
    for kind, sym in symbols.items():
        names = [n for n, k in g.nodes(data="kind") if k == kind]
        if names:
            fig.add_scatter(x=[g.nodes[n]["pos"][0] for n in names], y=[g.nodes[n]["pos"][1] for n in names],
                            mode="markers+text", text=names, textposition="top center", textfont=dict(size=9),
                            name=kind, marker=dict(symbol=sym, size=14, color="white", line=dict(color="#333", width=2)))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def topology_heatmap(topo: topology.Topology, title: str = "nvidia-smi topo -m"):
    """The connectivity matrix as a heatmap: colour = path class (fastest dark), text = the cell as printed."""
    from helpers.core import plotting

    classes = ["X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"]
    z = [[classes.index(topology.link_class(c)) if topology.link_class(c) in classes else len(classes)
          for c in row] for row in topo.matrix]
    n = len(classes) - 1
    colours = ["#ffffff", "#1f5f8b", "#3a9b5c", "#8fc28f", "#f0c05a", "#e07a1f", "#c0392b"]
    scale = [[i / n, c] for i, c in enumerate(colours)]
    fig = plotting.figure(title=title, height=max(360, 28 * len(topo.devices) + 140))
    fig.add_heatmap(z=z, x=list(topo.devices), y=list(topo.devices), text=[list(r) for r in topo.matrix],
                    texttemplate="%{text}", textfont=dict(size=9), colorscale=scale, zmin=0, zmax=n,
                    colorbar=dict(tickvals=list(range(len(classes))), ticktext=classes, title="path"),
                    hovertemplate="%{y} ↔ %{x}: %{text}<extra></extra>")
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(side="top", showgrid=False)
    return fig


def nic_table(topo: topology.Topology):
    """For each GPU: the nearest NIC, the path to it, its device name and the GPU's NUMA node (empty without NICs)."""
    import pandas as pd

    names = dict(topo.nic_names)
    if not any(d.startswith("NIC") for d in topo.devices):
        return pd.DataFrame(columns=["gpu", "nearest NIC", "path", "NIC device", "GPU NUMA node"])
    rows = []
    for i, gpu in enumerate(topo.devices):
        if gpu.startswith("GPU"):
            nic, path = topology.nearest_nic(topo, gpu)
            rows.append({"gpu": gpu, "nearest NIC": nic, "path": path, "NIC device": names.get(nic, "?"),
                         "GPU NUMA node": topo.numa_affinity[i]})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- fabric: fat-tree sizing

@dataclass(frozen=True)
class FatTreePlan:
    endpoints: int
    radix: int
    levels: int
    leaf_switches: int
    spine_switches: int        # second level (aggregation, in a three-level tree)
    core_switches: int         # third level (0 in a two-level tree)
    switches_total: int
    switch_to_switch_links: int
    max_endpoints: int         # what this number of levels supports at this radix


def fat_tree(endpoints: int, radix: int = 64) -> FatTreePlan:
    """A non-blocking folded-Clos (fat-tree) for ``endpoints`` NIC ports built from ``radix``-port switches:
    every leaf uses half its ports down, half up. Two levels reach radix²/2 endpoints, three levels radix³/4."""
    if not (isinstance(radix, int) and radix >= 4 and radix % 2 == 0):
        raise ValueError(f"radix={radix!r}: a switch's port count, an even number ≥ 4 (e.g. 64 for NDR switches)")
    if not (isinstance(endpoints, int) and endpoints >= 1):
        raise ValueError(f"endpoints={endpoints!r}: the number of NIC ports to connect, a whole number ≥ 1")
    h = radix // 2
    leaves = math.ceil(endpoints / h)
    if endpoints <= radix * h:                                 # two levels
        spines = math.ceil(leaves * h / radix)
        return FatTreePlan(endpoints, radix, 2, leaves, spines, 0, leaves + spines, leaves * h, radix * h)
    if endpoints > radix**3 // 4:
        raise ValueError(f"endpoints={endpoints} exceed a three-level fat-tree of radix {radix} "
                         f"({radix**3 // 4}); use bigger switches or more levels")
    pods = math.ceil(leaves / h)                               # a pod: h leaves + h aggregation switches
    agg = pods * h
    core = math.ceil(agg * h / radix)
    return FatTreePlan(endpoints, radix, 3, leaves, agg, core, leaves + agg + core, leaves * h + agg * h,
                       radix**3 // 4)
