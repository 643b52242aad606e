"""Figures of the operations chapters, drawn from the data the ``helpers.ops`` labs compute (chapters 05, 12, 13).

* :func:`mig_layout` — a MIG plan (``ops.mig``) as rows of memory slices (chapter 05);
* :func:`sharing_bars` — p99 latency per GPU-sharing mode (``ops.sharing``) (chapter 05);
* :func:`metric_lines` — exporter samples (``ops.exporter``) over time (chapter 12);
* :func:`gantt` — a scheduler simulation (``ops.schedsim``) as a Gantt chart (chapter 13).
"""
from __future__ import annotations

from helpers.core import plotting

_COLOURS = {"1g": "#9ecae1", "2g": "#6baed6", "3g": "#3182bd", "4g": "#08519c", "7g": "#08306b"}


def mig_layout(gpu: str, boards) -> "plotting.go.Figure":
    """Each GPU of a MIG plan as a row of 8 memory slices, every instance a bar at its placement."""
    fig = plotting.figure(f"MIG placements on {gpu}", "memory slice (of 8)", "GPU")
    for g, board in enumerate(boards):
        for inst in board:
            fig.add_bar(x=[inst.memory], y=[f"GPU {g}"], base=[inst.start], orientation="h",
                        marker_color=_COLOURS.get(inst.profile[:2], "#999"), marker_line_color="white",
                        marker_line_width=2, text=f"{inst.profile} ({inst.compute}/7 SMs)", textposition="inside",
                        showlegend=False, hovertemplate=f"{inst.profile} at slice {inst.start}<extra></extra>")
    fig.update_layout(barmode="overlay", height=120 + 60 * len(boards), xaxis=dict(range=[0, 8], dtick=1),
                      yaxis=dict(autorange="reversed"))
    return fig


def sharing_bars(results_busy, results_quiet) -> "plotting.go.Figure":
    """p99 latency of the latency-sensitive tenant, with and without a noisy neighbour, per sharing mode."""
    fig = plotting.figure("Tenant 0's p99 latency under each way of sharing a GPU", "sharing mode", "p99 latency (ms)")
    fig.add_bar(x=[r.mode for r in results_quiet], y=[r.p99_ms for r in results_quiet], name="neighbour idle")
    fig.add_bar(x=[r.mode for r in results_busy], y=[r.p99_ms for r in results_busy], name="neighbour training")
    fig.update_layout(barmode="group")
    return fig


def gantt(sim, title: str = "", unit_s: float = 3600.0, unit: str = "h") -> "plotting.go.Figure":
    """A schedule as stacked bars: each job from start to end, at the height of its first free slot."""
    fig = plotting.figure(title or f"{sim.policy}: schedule", f"time ({unit})", "nodes")
    slots: list[float] = [0.0] * sim.nodes           # when each node becomes free (for drawing only)
    for j in sorted(sim.jobs, key=lambda j: (j.start_s, j.id)):
        free = [i for i, t in enumerate(slots) if t <= j.start_s + 1e-9]
        base = next((free[k] for k in range(len(free) - j.size + 1)
                     if free[k + j.size - 1] - free[k] == j.size - 1), free[0] if free else 0)
        for i in range(base, min(base + j.size, sim.nodes)):
            slots[i] = j.end_s
        fig.add_bar(x=[(j.end_s - j.start_s) / unit_s], base=[j.start_s / unit_s], y=[base + j.size / 2],
                    width=[j.size * 0.95], orientation="h", showlegend=False,
                    hovertemplate=f"job {j.id} ({j.size} nodes, waited {j.wait_s / unit_s:.1f} {unit})<extra></extra>")
    fig.update_layout(barmode="overlay", yaxis=dict(range=[0, sim.nodes]), height=350)
    return fig


def metric_lines(samples, metrics: list[str], title: str, yaxis: str) -> "plotting.go.Figure":
    """Time series of exporter samples (``helpers.ops.exporter.Sample`` or their dicts)."""
    fig = plotting.figure(title, "time (s)", yaxis)
    rows = [s if isinstance(s, dict) else s.__dict__ for s in samples]
    for m in metrics:
        for gpu in sorted({r["gpu"] for r in rows if r["metric"] == m}):
            pts = [r for r in rows if r["metric"] == m and r["gpu"] == gpu]
            fig.add_scatter(x=[r["t_s"] for r in pts], y=[r["value"] for r in pts], mode="lines+markers",
                            name=f"{m} ({gpu})")
    return fig
