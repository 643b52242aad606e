"""The expected band of a metric on a GPU as a shaded horizontal region on an existing plotly figure (appendix
"What to expect"; the measuring labs of chapters 02, 04, 08, 11 and 15).

    from helpers.figures import expect as expectfig
    expectfig.add_band(fig, "gemm_bf16_tflops", "NVIDIA H200")     # shades 715–874 TFLOP/s, labelled with its source
    expectfig.band_figure("hbm_triad_GBps")                         # every GPU's band of one metric, one bar each

The band comes from ``helpers.core.expect``; a GPU or metric without a band leaves the figure as it was and says so
in a small note, never a guessed region.
"""
from __future__ import annotations

from helpers.core import expect, plotting

BAND_COLOR = "#3a9b5c"


def add_band(fig, metric: str, gpu: str, *, scale: float = 1.0, label: bool = True):
    """Shade the band of ``metric`` on ``gpu`` across the plot (y from low to high, times ``scale`` to match the
    figure's unit, e.g. 1e3 for a GB/s band on an MB/s axis) and mark the typical value with a dotted line.
    Returns the figure."""
    b = expect.band(metric, gpu)
    if b is None:
        fig.add_annotation(text=f"no band for {expect.LABELS.get(metric, metric)} on {gpu}", showarrow=False,
                           xref="paper", yref="paper", x=1, y=1.02, xanchor="right", font=dict(size=10))
        return fig
    text = f"{expect.LABELS.get(metric, metric)}, expected on {b.gpu}: {b.low * scale:.3g}–{b.high * scale:.3g} ({b.kind}, {b.source_name})" if label else None
    fig.add_hrect(y0=b.low * scale, y1=b.high * scale, fillcolor=BAND_COLOR, opacity=0.15, line_width=0,
                  annotation_text=text, annotation_position="top left", annotation_font_size=10)
    fig.add_hline(y=b.typical * scale, line_dash="dot", line_color=BAND_COLOR, line_width=1)
    return fig


def band_figure(metric: str, gpus: list[str] | None = None):
    """One bar per GPU from low to high with the typical value marked; measured and derived rows coloured apart."""
    rows = [b for b in expect.bands(metric=metric) if gpus is None or b.gpu in {expect.gpu_key(g) for g in gpus}]
    if not rows:
        raise ValueError(f"no bands for metric {metric!r}: known metrics are {sorted(expect.LABELS)}")
    fig = plotting.figure(title=f"What to expect: {expect.LABELS.get(metric, metric)}", xaxis_title="GPU",
                          yaxis_title=f"{expect.LABELS.get(metric, metric)} ({rows[0].unit})")
    for kind, color in (("measured", plotting.COLORS[0]), ("derived", plotting.COLORS[1])):
        sel = [b for b in rows if b.kind == kind]
        if sel:
            fig.add_bar(x=[b.gpu for b in sel], y=[b.high - b.low for b in sel], base=[b.low for b in sel],
                        name=f"{kind} band (low–high)", marker_color=color, opacity=0.6,
                        customdata=[[b.typical, b.source_name] for b in sel],
                        hovertemplate="%{x}: %{base:.3g}–%{y:.3g} wide<br>typical %{customdata[0]:.3g}"
                                      "<br>%{customdata[1]}<extra></extra>")
            fig.add_scatter(x=[b.gpu for b in sel], y=[b.typical for b in sel], mode="markers", showlegend=False,
                            marker=dict(color="black", symbol="line-ew-open", size=14))
    return fig
