"""Figures for the networking and communication chapters (03 and 08), drawn from the helpers' own data.

Each function returns a plotly figure in the book's style (``helpers.core.plotting``); axis titles carry units.
"""
from __future__ import annotations

import re

from helpers.core import plotting
from helpers.formulas import comm
from helpers.network import commmodel

_PHASE_COLOURS = {"reduce-scatter": plotting.COLORS[0], "all-gather": plotting.COLORS[2]}


def busbw_figure(records, title: str = "Collectives: bus bandwidth by message size"):
    """busbw (GB/s) against size for each op in ``records`` (dicts from helpers.network.collectives)."""
    fig = plotting.figure(title, "message size S (bytes, log scale)", "busbw (GB/s)")
    for i, op in enumerate(dict.fromkeys(r["op"] for r in records)):
        rs = [r for r in records if r["op"] == op]
        fig.add_scatter(x=[r["size_bytes"] for r in rs], y=[r["busbw_GBps"] for r in rs], mode="lines+markers",
                        name=f"{op} (n={rs[0]['world_size']}, {rs[0]['backend']})", line=dict(color=plotting.COLORS[i % 8]))
    fig.update_xaxes(type="log")
    return fig


def fit_figure(sizes, times, line: comm.AlphaBeta, label: str = "measured"):
    """Measured times and the fitted t = α + β·S, both axes logarithmic."""
    fig = plotting.figure("All-reduce time and the fitted alpha-beta line", "message size S (bytes)", "time (µs)")
    fig.add_scatter(x=list(sizes), y=[t * 1e6 for t in times], mode="markers", name=label,
                    marker=dict(color=plotting.LIVE, size=9))
    lo, hi = min(sizes), max(sizes)
    xs = [lo * (hi / lo) ** (i / 40) for i in range(41)]
    fig.add_scatter(x=xs, y=[line.time_s(x) * 1e6 for x in xs], mode="lines", name="α + β·S (fit)",
                    line=dict(color=plotting.RECORDED))
    fig.add_vline(x=line.half_bw_bytes, line_dash="dot", line_color=plotting.SPEC,
                  annotation_text="n½ = α/β", annotation_position="top left")
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


def model_figure(world_size: int = 64, algorithms=comm.ALGORITHMS, relative: bool = False):
    """All-reduce time in units of α against message size in units of n½ = α/β (dimensionless).

    ``relative`` divides every curve by the ring's time, so crossovers sit where a curve crosses 1."""
    unit = comm.AlphaBeta(1.0, 1.0)            # α = 1, β = 1  →  n½ = 1
    xs = [10 ** (i / 10) for i in range(-10, 71)]
    ring = [comm.ring_s(x, world_size, unit) for x in xs]
    fig = plotting.figure(f"All-reduce cost models, p = {world_size} ranks", "message size n / n½ (log scale)",
                          "time ÷ ring time" if relative else "time / α (log scale)")
    for i, alg in enumerate(algorithms):
        ys = [comm.allreduce_s(alg, x, world_size, unit) for x in xs]
        fig.add_scatter(x=xs, y=[y / r for y, r in zip(ys, ring)] if relative else ys, mode="lines",
                        name=alg.replace("_", " "), line=dict(color=plotting.COLORS[i % 8]))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


def ring_figure(world_size: int = 4):
    """Which chunk every rank sends at every step of a ring all-reduce (from ringallreduce.ring_schedule)."""
    from helpers.network import ringallreduce

    rows = ringallreduce.ring_schedule(world_size)
    steps = 2 * (world_size - 1)
    fig = plotting.figure(f"Ring all-reduce on {world_size} ranks: the chunk each rank sends to its right neighbour",
                          "step", "rank")
    for phase, colour in _PHASE_COLOURS.items():
        rs = [r for r in rows if r["phase"] == phase]
        fig.add_scatter(x=[r["step"] for r in rs], y=[r["rank"] for r in rs], mode="markers+text", name=phase,
                        text=[f"c{r['send_chunk']}→{r['to']}" for r in rs], textposition="middle center",
                        marker=dict(symbol="square", size=46, color=colour, opacity=0.35))
    fig.update_xaxes(tickmode="array", tickvals=list(range(steps)), range=[-0.6, steps - 0.4])
    fig.update_yaxes(tickmode="array", tickvals=list(range(world_size)), autorange="reversed")
    return fig


def _tree_xy(parent: dict[int, int]):
    """Positions for drawing a tree: x = rank (in-order), y = depth."""
    depth = {}

    def d(r):
        if r not in depth:
            depth[r] = 0 if parent[r] == -1 else d(parent[r]) + 1
        return depth[r]

    return {r: (r, -d(r)) for r in parent}


def trees_figure(world_size: int = 8):
    """NCCL's double binary tree: the two complementary trees side by side (inner nodes filled)."""
    from plotly.subplots import make_subplots

    t1, t2 = commmodel.double_btree(world_size)
    fig = make_subplots(1, 2, subplot_titles=("tree 1 (carries the first half)", "tree 2 (the second half)"))
    for col, tree in ((1, t1), (2, t2)):
        xy, inner = _tree_xy(tree), commmodel.inner_ranks(tree)
        for r, u in tree.items():
            if u != -1:
                fig.add_scatter(x=[xy[r][0], xy[u][0]], y=[xy[r][1], xy[u][1]], mode="lines", showlegend=False,
                                line=dict(color=plotting.SPEC), row=1, col=col)
        for kind, sel, colour in (("inner", True, plotting.COLORS[0]), ("leaf", False, "white")):
            rs = [r for r in tree if (r in inner) == sel]
            fig.add_scatter(x=[xy[r][0] for r in rs], y=[xy[r][1] for r in rs], mode="markers+text",
                            text=[str(r) for r in rs], name=f"{kind} rank", showlegend=col == 1,
                            marker=dict(size=26, color=colour, line=dict(color=plotting.COLORS[0], width=2)),
                            textfont=dict(color="white" if sel else "black"), row=1, col=col)
    fig.update_layout(title=f"Double binary tree on {world_size} ranks", template=plotting.TEMPLATE, height=380)
    fig.update_xaxes(title_text="rank", showgrid=False)
    fig.update_yaxes(title_text="depth (levels below the root)", showgrid=False)
    return fig


def bucket_figure(records, title: str = "DDP step time by bucket size"):
    """Stacked bars per bucket cap: compute-only time and the communication the step could not hide."""
    fig = plotting.figure(title, "bucket_cap_mb (MB)", "time per step (ms)", barmode="stack")
    x = [f"{r['bucket_cap_mb']:g} ({r['n_buckets']} buckets)" for r in records]
    fig.add_bar(x=x, y=[r["compute_s"] * 1e3 for r in records], name="compute (no_sync)", marker_color=plotting.LIVE)
    fig.add_bar(x=x, y=[max(0.0, r["exposed_comm_s"]) * 1e3 for r in records], name="exposed communication",
                marker_color=plotting.RECORDED)
    fig.add_scatter(x=x, y=[r["comm_s"] * 1e3 for r in records], mode="markers", name="one all-reduce of all grads",
                    marker=dict(symbol="diamond", size=11, color=plotting.COLORS[3]))
    return fig


# ------------------------------------------------------------------ the sample InfiniBand fabric

def _fabric_layout(inv):
    leaves = sorted({leaf for leaf, _ in inv.peer_leaf.values()})
    spines = sorted({re.search(r"→ (\w+)/", v).group(1) for v in inv.uplinks.values()})
    hosts = sorted({h for h, _ in inv.peer_leaf}, key=lambda h: (h.startswith("sm"), h))
    pos = {}
    for i, s in enumerate(spines):
        pos[s] = ((i + 0.5) * len(hosts) / len(spines) - 0.5, 2.0)
    for i, s in enumerate(leaves):
        pos[s] = ((i + 0.5) * len(hosts) / len(leaves) - 0.5, 1.0)
    for i, h in enumerate(hosts):
        pos[h] = (float(i), 0.0)
    return pos, spines, leaves, hosts


def _marks(findings):
    text = " ".join(f"{f.component} {f.evidence}" for f in findings)
    nodes = set(re.findall(r"\b((?:gpu|sm|spine|leaf)\d+)\b", text))
    links = {(h, "mlx5_" + str(int(u[1:]) - 1) if u.startswith("U") else u)
             for h, u in re.findall(r"\b((?:gpu|sm)\d+)/(mlx5_\d+|U\d+)", text)}
    ups = set(re.findall(r"(leaf\d+/P\d+) →", text)) | set(re.findall(r"(leaf\d+/P\d+) -", text))
    return nodes, links, ups


def fabric_figure(scenarios: dict, inventory=None):
    """The sample fabric with the parts each scenario's findings name drawn in red; one button per scenario.

    ``scenarios`` maps a scenario name to its list of ibdiag findings."""
    from helpers.network import ibinventory

    inv = inventory or ibinventory.load_inventory()
    pos, spines, leaves, hosts = _fabric_layout(inv)
    up_by_leaf = {}
    for (lid, port), label in inv.uplinks.items():
        up_by_leaf.setdefault(label.split("/")[0], []).append((port, label))
    fig = plotting.figure("The book's sample InfiniBand fabric", "", "")
    vis = []
    for name, findings in scenarios.items():
        nodes, links, ups = _marks(findings)
        segs = {"ok": ([], []), "bad": ([], [])}
        for (host, ca), (leaf, _) in inv.peer_leaf.items():
            off = 0.08 if ca.endswith("1") else -0.08
            key = "bad" if (host, ca) in links else "ok"
            segs[key][0].extend([pos[host][0] + off, pos[leaf][0], None])
            segs[key][1].extend([pos[host][1], pos[leaf][1], None])
        for leaf, plist in up_by_leaf.items():
            for j, (port, label) in enumerate(sorted(plist)):
                spine = re.search(r"→ (\w+)/", label).group(1)
                off = (j % 2 - 0.5) * 0.12
                key = "bad" if label.split(" →")[0] in ups else "ok"
                segs[key][0].extend([pos[leaf][0] + off, pos[spine][0] + off, None])
                segs[key][1].extend([pos[leaf][1], pos[spine][1], None])
        first = not vis
        for key, colour, width in (("ok", "#9aa5b1", 2), ("bad", plotting.COLORS[3], 5)):
            fig.add_scatter(x=segs[key][0], y=segs[key][1], mode="lines", line=dict(color=colour, width=width),
                            name="link" if key == "ok" else "link named by a finding", visible=first,
                            showlegend=first)
            vis.append(name)
        names = spines + leaves + hosts
        fig.add_scatter(x=[pos[n][0] for n in names], y=[pos[n][1] for n in names], mode="markers+text",
                        text=names, textposition="bottom center", visible=first, showlegend=False,
                        marker=dict(size=[30 if n in spines + leaves else 22 for n in names],
                                    symbol=["square" if n in spines + leaves else "circle" for n in names],
                                    color=[plotting.COLORS[3] if n in nodes else plotting.COLORS[0] for n in names]))
        vis.append(name)
    buttons = [dict(label=name, method="update",
                    args=[{"visible": [v == name for v in vis]}, {"title": f"Sample fabric — scenario: {name}"}])
               for name in scenarios]
    fig.update_layout(updatemenus=[dict(buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.15)],
                      title=f"Sample fabric — scenario: {next(iter(scenarios))}", height=440)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, range=[-0.5, 2.4])
    return fig

