"""Figures of the network chapters, drawn from the ``helpers.network`` models and traces (chapters 03, 08, 24).

* :func:`congestion_figure` — queue, goodput, victim rate and fairness of ``network.congestion``'s incast, one
  colour per mode (chapter 03);
* :func:`stack_figure` — the RDMA software stack (``network.verbs.STACK``) with the Magnum IO and OFED groupings
  (chapter 03);
* :func:`overlap_figure` — rank 0's step from its ``torch.profiler`` trace (``network.overlap``) (chapter 08);
* :func:`topology_figure` — a fat-tree graph of ``network.fabric`` in layers, or a spring layout (chapter 24).

    from helpers.figures import network as netfig
    netfig.congestion_figure(series)
"""
from __future__ import annotations

import networkx as nx
from plotly.subplots import make_subplots

from helpers.core import plotting
from helpers.network import overlap, verbs


def congestion_figure(series: dict[str, dict]):
    """Queue depth, incast goodput, the victim's rate and fairness over time, one colour per mode."""
    rows = [("queue_bytes", "queue (KB)", 1e-3), ("goodput_Gbps", "incast goodput (Gb/s)", 1),
            ("victim_Gbps", "victim (Gb/s)", 1), ("fairness", "Jain fairness", 1)]
    fig = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, vertical_spacing=0.04,
                        subplot_titles=[r[1] for r in rows])
    for i, mode in enumerate(series):
        s = series[mode]
        for j, (key, _, scale) in enumerate(rows):
            fig.add_scatter(x=s["t_us"], y=s[key] * scale, name=mode, legendgroup=mode, showlegend=j == 0,
                            line=dict(color=plotting.COLORS[i]), row=j + 1, col=1)
    fig.update_layout(height=760, title="Incast of 8 flows into one 100 Gb/s port (fluid model)")
    fig.update_xaxes(title_text="time (µs)", row=len(rows), col=1)
    return fig


def stack_figure():
    """The RDMA software stack as boxes, with the Magnum IO and OFED groupings drawn beside the layers they cover."""
    fig = plotting.figure(title="Where Magnum IO and OFED sit, from the framework to the wire")
    n = len(verbs.STACK)
    colour = {"Magnum IO": plotting.COLORS[2], "OFED": plotting.COLORS[0], None: plotting.SPEC}
    for i, (layer, parts, group) in enumerate(verbs.STACK):
        y0 = n - 1 - i
        fig.add_shape(type="rect", x0=0, x1=8, y0=y0 + 0.08, y1=y0 + 0.92, line=dict(color="#444"),
                      fillcolor=colour[group], opacity=0.25)
        fig.add_annotation(x=0.15, y=y0 + 0.5, text=f"<b>{layer}</b>: {parts}", showarrow=False, xanchor="left")
    for group in ("Magnum IO", "OFED"):
        rows = [n - 1 - i for i, s in enumerate(verbs.STACK) if s[2] == group]
        fig.add_shape(type="rect", x0=8.2, x1=8.5, y0=min(rows) + 0.08, y1=max(rows) + 0.92,
                      fillcolor=colour[group], line=dict(width=0))
        fig.add_annotation(x=8.6, y=(min(rows) + max(rows) + 1) / 2, text=group, showarrow=False, xanchor="left")
    fig.update_xaxes(visible=False, range=[0, 10])
    fig.update_yaxes(visible=False, range=[0, n])
    fig.update_layout(height=440, showlegend=False)
    return fig


def overlap_figure(lanes: dict[str, list[overlap.Interval]]):
    """A timeline per variant: one row per (variant, lane), one bar per event, from the exported trace."""
    fig = plotting.figure(title="Rank 0's step, read from its torch.profiler trace", xaxis_title="time (ms)")
    colour = {"step": plotting.SPEC, "compute": plotting.COLORS[0], "compute kernel": plotting.COLORS[0]}
    for variant, ivs in lanes.items():
        for iv in ivs:
            row = f"{variant}: {iv.name if iv.name == 'step' else iv.lane}"
            fig.add_bar(x=[iv.dur_s * 1e3], base=[iv.start_s * 1e3], y=[row], orientation="h", name=iv.name,
                        marker_color=colour.get(iv.name, plotting.COLORS[1]), showlegend=False,
                        hovertext=f"{iv.name}: {iv.dur_s * 1e3:.2f} ms")
    fig.update_layout(barmode="overlay", height=360, yaxis=dict(autorange="reversed"))
    return fig


def topology_figure(G: nx.Graph, title: str = ""):
    """A layered picture of a fat-tree graph (GPUs at the bottom, cores on top) or a spring layout otherwise."""
    tiers = {"gpu": 0, "leaf": 1, "spine": 2, "core": 3}
    if all(G.nodes[v].get("kind") in tiers for v in G):
        pos, by = {}, {}
        for v in sorted(G, key=str):
            by.setdefault(G.nodes[v]["kind"], []).append(v)
        for kind, vs in by.items():
            for i, v in enumerate(vs):
                pos[v] = ((i + 0.5) / len(vs), tiers[kind])
    else:
        pos = nx.spring_layout(G, seed=0)
    fig = plotting.figure(title=title, xaxis_title="", yaxis_title="tier (0 = GPUs)" if len(pos) else "")
    xs, ys = [], []
    for u, v in G.edges:
        xs += [pos[u][0], pos[v][0], None]
        ys += [pos[u][1], pos[v][1], None]
    fig.add_scatter(x=xs, y=ys, mode="lines", line=dict(width=0.5, color="#999"), name="cables", hoverinfo="skip")
    kinds = sorted({G.nodes[v].get("kind", "node") for v in G}, key=lambda k: tiers.get(k, 9))
    for k in kinds:
        vs = [v for v in G if G.nodes[v].get("kind", "node") == k]
        fig.add_scatter(x=[pos[v][0] for v in vs], y=[pos[v][1] for v in vs], mode="markers", name=k,
                        text=[str(v) for v in vs], marker=dict(size=5 if k == "gpu" else 8))
    fig.update_xaxes(showticklabels=False)
    return fig
