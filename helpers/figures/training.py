"""Figures of the training chapters, drawn from the ``helpers.training`` models (chapters 06, 07, 09).

* :func:`zero_figure` — ZeRO's Figure 1 as numbers, from ``training.calc.memory.model_states`` (chapter 06);
* :func:`memory_figure` — the per-GPU memory calculator (``training.calc.memory.sweep``) as a static figure with a
  dp slider and a recompute menu (chapter 09);
* :func:`timeline_figure` — a pipeline schedule's events (``training.calc.pipeline_schedule``, or the measured ones
  of ``training.parallel.pipeline``) as a Gantt chart (chapter 07);
* :func:`split_figure` — which rank owns which block of the Megatron MLP's weights (``training.parallel.tensorpar``,
  chapter 07).

    from helpers.figures import training as trainfig
    trainfig.zero_figure(7.5e9, dp=64)
"""
from __future__ import annotations

import numpy as np
from plotly.subplots import make_subplots

from helpers.core import plotting
from helpers.training.calc import memory


def zero_figure(n_params: float = 7.5e9, dp: int = 64, precision: str = "mixed-adam"):
    """ZeRO's Figure 1 as numbers: per-GPU weights, gradients and optimizer state for stages 0-3."""
    st = [memory.model_states(n_params, z, dp, precision) for z in range(4)]
    fig = plotting.figure(title=f"Model states per GPU: Ψ = {n_params / 1e9:g}B, N_d = {dp}, {precision}",
                          xaxis_title="ZeRO stage", yaxis_title="memory per GPU (GB)", barmode="stack")
    for i, comp in enumerate(("weights", "grads", "optimizer")):
        fig.add_bar(x=["0 (DDP)", "1 (P_os)", "2 (P_os+g)", "3 (P_os+g+p)"],
                    y=[getattr(s, f"{comp}_bytes") / 1e9 for s in st], name=comp, marker_color=plotting.COLORS[i])
    return fig


def memory_figure(model: memory.ModelShape, gpu_memory_GB: float, dps=(1, 2, 4, 8, 16, 32, 64), title: str = "",
                  start_dp: int = 8, **kw):
    """A static, self-contained calculator: stacked bars per ZeRO stage; a slider picks dp (starting at
    ``start_dp``), a dropdown picks the recomputation. Works in the static book (no kernel needed)."""
    rows = memory.sweep(model, dps=dps, **kw)
    stages = sorted({r["zero_stage"] for r in rows})
    x = [f"ZeRO-{z}" for z in stages]

    def ys(dp, rec, comp):
        return [next(r[f"{comp}_GB"] for r in rows if r["dp"] == dp and r["zero_stage"] == z
                     and r["recompute"] == rec) for z in stages]

    fig = plotting.figure(title=title or f"Memory per GPU, {model.n_params / 1e9:.1f}B parameters",
                          xaxis_title="ZeRO stage", yaxis_title="memory per GPU (GB)", barmode="stack")
    traces = [(rec, comp) for rec in memory.RECOMPUTE for comp in memory.COMPONENTS]
    start = dps.index(start_dp) if start_dp in dps else 0
    for rec, comp in traces:
        fig.add_bar(x=x, y=ys(dps[start], rec, comp), name=comp, legendgroup=comp, visible=rec == "none",
                    marker_color=plotting.COLORS[memory.COMPONENTS.index(comp)], showlegend=True)
    fig.add_hline(y=gpu_memory_GB, line_dash="dash", line_color=plotting.SPEC,
                  annotation_text=f"GPU memory {gpu_memory_GB:g} GB")
    fig.update_layout(
        sliders=[dict(active=start, currentvalue=dict(prefix="data-parallel size dp = "), pad=dict(t=40),
                      steps=[dict(label=str(dp), method="restyle",
                                  args=[{"y": [ys(dp, rec, comp) for rec, comp in traces]}]) for dp in dps])],
        updatemenus=[dict(type="dropdown", x=1.02, xanchor="left", y=0.45, yanchor="top", active=0,
                          buttons=[dict(label=f"recompute: {rec}", method="restyle",
                                        args=[{"visible": [r == rec for r, _ in traces]}])
                                   for rec in memory.RECOMPUTE])],
        height=520)
    return fig


def timeline_figure(events, title: str = "", time_unit: str = "time (units of one forward)"):
    """A Gantt chart: one row per device, forward and backward boxes labelled with their micro-batch."""
    fig = plotting.figure(title=title, xaxis_title=time_unit, yaxis_title="device (pipeline stage)",
                          barmode="overlay")
    devices = sorted({e.device for e in events})
    for kind, name, color in (("F", "forward", plotting.COLORS[0]), ("B", "backward", plotting.COLORS[1])):
        ev = [e for e in events if e.kind == kind]
        fig.add_bar(y=[f"device {e.device}" for e in ev], x=[e.end_s - e.start_s for e in ev],
                    base=[e.start_s for e in ev], orientation="h", name=name, marker_color=color,
                    marker_line_color="white", marker_line_width=1,
                    marker_opacity=[1.0 - 0.35 * e.chunk / max(1, max(x.chunk for x in events)) for e in ev],
                    text=[str(e.mb) for e in ev], textposition="inside", insidetextanchor="middle",
                    hovertemplate="micro-batch %{text}<br>start %{base}<extra>" + name + "</extra>")
    fig.update_yaxes(categoryorder="array", categoryarray=[f"device {d}" for d in reversed(devices)])
    fig.update_layout(height=120 + 45 * len(devices), bargap=0.15)
    return fig


def split_figure(world_size: int = 2, d_model: int = 8):
    """Who owns which block of A (h × 4h, split by columns) and B (4h × h, split by rows)."""
    h, f = d_model, 4 * d_model
    own_a = np.repeat(np.arange(world_size), f // world_size)[None, :].repeat(h, 0)      # (h, 4h)
    own_b = np.repeat(np.arange(world_size), f // world_size)[:, None].repeat(h, 1)      # (4h, h)
    fig = make_subplots(1, 2, column_widths=[0.7, 0.3], horizontal_spacing=0.12,
                        subplot_titles=("A (h × 4h), split by columns", "B (4h × h), split by rows"))
    scale = [[i / max(1, world_size - 1), plotting.COLORS[i]] for i in range(world_size)]
    for col, own in ((1, own_a), (2, own_b)):
        one = [[0, plotting.COLORS[0]], [1, plotting.COLORS[0]]]
        fig.add_heatmap(z=own, colorscale=scale if world_size > 1 else one,
                        showscale=col == 2, xgap=1, ygap=1, row=1, col=col, zmin=0, zmax=max(1, world_size - 1),
                        colorbar=dict(title="rank", tickvals=list(range(world_size))),
                        hovertemplate="row %{y}, column %{x}: rank %{z}<extra></extra>")
    fig.update_yaxes(autorange="reversed", title_text="input feature (row)", row=1, col=1)
    fig.update_yaxes(autorange="reversed", title_text="hidden feature (row)", row=1, col=2)
    fig.update_xaxes(title_text="hidden feature (column)", row=1, col=1)
    fig.update_xaxes(title_text="output feature (column)", row=1, col=2)
    fig.update_layout(template=plotting.TEMPLATE, height=400, margin=dict(t=100),
                      title=f"Megatron MLP on {world_size} ranks: colour = owning rank")
    return fig
