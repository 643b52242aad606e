"""Chapter 01 diagrams drawn by code: the history of GPU computing, and a cluster's networks.

    from helpers.figures import clustermap
    clustermap.timeline_figure()                      # milestones (helpers/figures/data/gpu_history.yaml) + datasheet peaks
    g = clustermap.cluster_graph(n_gpu_nodes=4)       # a networkx graph: servers, switches, the networks
    clustermap.network_summary(g)                     # links per network, and what each carries
    clustermap.cluster_figure(g)                      # the plotly drawing

A GPU cluster runs several separate networks (the Chinese outlines call them 三张网, "three networks"):
the *compute* fabric between GPUs (InfiniBand or RoCE, one NIC per GPU, "rails"), the *storage* network to
the parallel file system, and the *management* network (in-band Ethernet for logins, scheduling and monitoring,
plus an out-of-band network to each server's BMC for IPMI/Redfish power and console control).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from helpers.core import specs

DATA = Path(__file__).parent / "data" / "gpu_history.yaml"


@dataclass(frozen=True)
class Milestone:
    year: int
    kind: str          # "hardware", "software" or "workload"
    event: str
    label: str         # a few words for the figure
    source: str


def history() -> list[Milestone]:
    rows = yaml.safe_load(DATA.read_text())
    out = [Milestone(**r) for r in rows]
    bad = [m.event for m in out if not m.source.startswith("https://")]
    if bad:
        raise ValueError(f"{DATA.name}: milestones without a source URL: {bad}")
    return sorted(out, key=lambda m: (m.year, m.kind))


def timeline_figure():
    """Milestones on a time axis (one lane per kind) above the dense BF16/FP16 Tensor Core peak per GPU
    generation from the spec table (log scale): thirty years of GPU computing in one picture."""
    from plotly.subplots import make_subplots

    from helpers.core import plotting

    ms = history()
    lanes = {"hardware": 3, "software": 2, "workload": 1}
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.55, 0.45], vertical_spacing=0.06)
    for i, (kind, y) in enumerate(lanes.items()):
        sel = [m for m in ms if m.kind == kind]
        # alternate above/below the lane line so neighbouring years do not overlap
        up = [j % 2 == 0 for j in range(len(sel))]
        fig.add_scatter(x=[m.year for m in sel], y=[y + (0.12 if u else -0.12) for u in up], mode="markers+text",
                        name=kind, text=[m.label for m in sel], textfont=dict(size=10),
                        textposition=["top center" if u else "bottom center" for u in up],
                        marker=dict(size=9, color=plotting.COLORS[i]), customdata=[m.event for m in sel],
                        hovertemplate="%{x}: %{customdata}<extra></extra>", row=1, col=1)
    rows = sorted((s.year, s.fp16_tflops, s.name) for s in specs.all_specs()
                  if s.fp16_tflops and s.architecture != "Ada Lovelace" and "PCIe" not in s.name)
    fig.add_scatter(x=[r[0] for r in rows], y=[r[1] for r in rows], mode="markers+text", name="dense FP16 peak",
                    text=[r[2] for r in rows], textfont=dict(size=10),
                    textposition=["bottom center" if i and r[1] == rows[i - 1][1] else "top left"
                                  for i, r in enumerate(rows)],
                    marker=dict(color=plotting.SPEC, size=9), row=2, col=1)
    fig.update_yaxes(tickvals=list(lanes.values()), ticktext=list(lanes), range=[0.4, 3.6], row=1, col=1)
    fig.update_yaxes(type="log", title_text="dense FP16 Tensor TFLOP/s", row=2, col=1)
    fig.update_xaxes(range=[1997, 2026.5], row=1, col=1)
    fig.update_xaxes(title_text="year", row=2, col=1)
    fig.update_layout(title="GPU computing: milestones and datasheet peaks", height=620, showlegend=False)
    return fig


# ---------------------------------------------------------------- the networks of a cluster

NETWORKS = {  # name: (colour, dash, what it carries, typical technology)
    "compute": ("#1f5f8b", "solid", "gradients and activations between GPUs (NCCL collectives)",
                "InfiniBand or RoCE; one NIC per GPU"),
    "storage": ("#e07a1f", "solid", "training data in, checkpoints out",
                "Ethernet/RoCE or InfiniBand to a parallel file system"),
    "management": ("#3a9b5c", "dot", "SSH, the scheduler (Slurm/Kubernetes), monitoring, software images",
                   "Ethernet"),
    "out-of-band": ("#888888", "dash", "BMC: power, console, sensors (IPMI/Redfish), even when the OS is down",
                    "Ethernet to each server's BMC port"),
}


def cluster_graph(n_gpu_nodes: int = 4, rails: int = 2, spines: int = 2, storage_servers: int = 2):
    """A small GPU cluster as a networkx Graph. Nodes carry ``kind`` and ``pos`` (x, y); edges carry ``network``.

    The compute fabric is rail-optimised: every GPU server has a link to every rail (leaf) switch, and the
    leaves meet at the spines. Storage, management and out-of-band networks are separate switches."""
    import networkx as nx

    for name, v in (("n_gpu_nodes", n_gpu_nodes), ("rails", rails), ("spines", spines),
                    ("storage_servers", storage_servers)):
        if not (isinstance(v, int) and 1 <= v <= 32):
            raise ValueError(f"{name}={v!r}: use a whole number from 1 to 32 (this is a diagram, not a plan)")
    g = nx.Graph()
    span = max(n_gpu_nodes, 2) * 2.0

    def xs(k):  # k positions spread over the drawing's width
        return [span * (i + 0.5) / k for i in range(k)]

    for i, x in enumerate(xs(spines)):
        g.add_node(f"spine{i}", kind="switch", pos=(x, 4.0))
    for i, x in enumerate(xs(rails)):
        g.add_node(f"rail{i} leaf", kind="switch", pos=(x, 3.0))
        for s in range(spines):
            g.add_edge(f"rail{i} leaf", f"spine{s}", network="compute")
    for i, x in enumerate(xs(n_gpu_nodes)):
        node = f"gpu-node{i}"
        g.add_node(node, kind="gpu server", pos=(x, 1.8))
        for r in range(rails):
            g.add_edge(node, f"rail{r} leaf", network="compute")
    g.add_node("storage switch", kind="switch", pos=(span * 0.5, 0.6))
    for i, x in enumerate(xs(storage_servers)):
        g.add_node(f"storage{i}", kind="storage server", pos=(x, -0.4))
        g.add_edge(f"storage{i}", "storage switch", network="storage")
    g.add_node("login", kind="service node", pos=(-2.2, 2.6))
    g.add_node("head (scheduler)", kind="service node", pos=(-2.2, 1.4))
    g.add_node("mgmt switch", kind="switch", pos=(-2.2, 0.2))
    g.add_node("BMC switch", kind="switch", pos=(-2.2, -0.9))
    servers = [n for n, k in g.nodes(data="kind") if k in ("gpu server", "storage server", "service node")]
    for n in servers:
        if g.nodes[n]["kind"] != "storage server":
            g.add_edge(n, "storage switch", network="storage")
        g.add_edge(n, "mgmt switch", network="management")
        g.add_edge(n, "BMC switch", network="out-of-band")
    return g


def network_summary(g):
    """One row per network: number of links, switches on it, what it carries, typical technology."""
    import pandas as pd

    rows = []
    for net, (_, _, carries, tech) in NETWORKS.items():
        edges = [(a, b) for a, b, n in g.edges(data="network") if n == net]
        switches = sorted({x for e in edges for x in e if g.nodes[x]["kind"] == "switch"})
        rows.append({"network": net, "links": len(edges), "switches": len(switches), "carries": carries,
                     "typical technology": tech})
    return pd.DataFrame(rows)


def cluster_figure(g, title: str = "A GPU cluster's networks"):
    """Draw ``cluster_graph`` with plotly: one colour and dash per network, one marker shape per kind of box."""
    from helpers.core import plotting

    fig = plotting.figure(title=title, height=560)
    for net, (colour, dash, carries, _) in NETWORKS.items():
        x, y = [], []
        for a, b, n in g.edges(data="network"):
            if n == net:
                (xa, ya), (xb, yb) = g.nodes[a]["pos"], g.nodes[b]["pos"]
                x += [xa, xb, None]
                y += [ya, yb, None]
        fig.add_scatter(x=x, y=y, mode="lines", name=f"{net} network", line=dict(color=colour, dash=dash, width=1.6),
                        hoverinfo="skip")
    symbols = {"switch": "square", "gpu server": "circle", "storage server": "diamond", "service node": "triangle-up"}
    for kind, sym in symbols.items():
        names = [n for n, k in g.nodes(data="kind") if k == kind]
        fig.add_scatter(x=[g.nodes[n]["pos"][0] for n in names], y=[g.nodes[n]["pos"][1] for n in names],
                        mode="markers+text", text=names, textposition="middle right" if kind != "gpu server"
                        else "bottom center", name=kind, marker=dict(symbol=sym, size=16, color="white",
                                                                    line=dict(color="#333", width=2)))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(legend=dict(orientation="h", y=-0.05))
    return fig
