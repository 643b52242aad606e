"""Plotly set up for the book: one look, and figures that render in the static book with no network.

Importing this module registers a renderer named ``"book"`` and makes it the default. It emits two
representations of each figure:

* ``text/html`` — a ``<div>`` plus a call to ``Plotly.newPlot``; plotly.js itself is *not* inlined (that
  would add ~5 MB per notebook). ``make static`` copies ``plotly.min.js`` from the plotly package, and the book's
  extension (``book/_ext/bookpages.py``) loads it, deferred, only on pages with a figure, makes each figure's
  script wait for it and thins long floats, so the figure renders offline. ``assets/js/book-figures.js`` holds the
  book's responsive rule for every figure type (wrapped titles, legend and menus above the plot on phones, sliders
  below the tick labels, automargin, tick and label thinning, heatmap text sized to its cells, a minimum plot
  height, dark mode) and applies it in the reader's browser at the page's width, so this renderer's output — and
  every stored notebook output — stays as it is; ``scripts/figurecheck.py`` measures the result at 390 and 1366 px. The div id is derived from the figure's content, so the same
  figure gives the same HTML on every run and nbval can compare it.
* ``application/vnd.plotly.v1+json`` — what JupyterLab and VS Code render in a live notebook.

    from helpers.core import plotting
    fig = plotting.figure(title="…", xaxis_title="size (bytes)", yaxis_title="bandwidth (GB/s)")
"""
from __future__ import annotations

import base64
import hashlib
import json
import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

COLORS = ["#1f5f8b", "#e07a1f", "#3a9b5c", "#c0392b", "#7d5ba6", "#8c6d31", "#d35f9b", "#5f6f7f"]
# The reader's live machine and the recorded H200 get fixed colours in every chapter.
LIVE, RECORDED, SPEC = COLORS[0], COLORS[1], "#888888"

pio.templates["book"] = go.layout.Template(
    layout=dict(font=dict(family="Inter, Helvetica, Arial, sans-serif", size=13),
                colorway=COLORS, plot_bgcolor="white", paper_bgcolor="white",
                margin=dict(l=60, r=20, t=50, b=50), height=420,
                xaxis=dict(showgrid=True, gridcolor="#e5e5e5", zeroline=False, linecolor="#444"),
                yaxis=dict(showgrid=True, gridcolor="#e5e5e5", zeroline=False, linecolor="#444"),
                legend=dict(bgcolor="rgba(255,255,255,0.8)")))


def _lean_plotly_template() -> go.layout.Template:
    """Plotly's own "plotly" template without what a 2-D figure of scatter, bar and heatmap traces never reads
    (defaults for 21 other trace types, geo/polar/ternary/3-D scenes) and with colour-scale stops at 4 digits:
    every figure carries its template inline, and the full one is 7.3 KB of each figure's weight on a phone."""
    t = pio.templates["plotly"].to_plotly_json()
    t["data"] = {k: v for k, v in t["data"].items() if k in ("scatter", "bar", "heatmap")}
    t["layout"] = {k: v for k, v in t["layout"].items() if k not in ("geo", "polar", "ternary", "scene")}

    def short(v):
        if isinstance(v, float):
            return float(f"{v:.4g}")
        if isinstance(v, (list, tuple)):
            return [short(x) for x in v]
        return {k: short(x) for k, x in v.items()} if isinstance(v, dict) else v
    return go.layout.Template(short(t))


pio.templates["plotly_lean"] = _lean_plotly_template()
TEMPLATE = "plotly_lean+book"          # what every figure of the book uses
pio.templates.default = TEMPLATE


# Significant digits a figure's floats are stored with: a screen shows 3-4 (hover 3), and the last bits of a float
# depend on the CPU's kernels (AVX-512 or AVX2 exp/log, BLAS blocking), so a stored figure that carried all 17 digits
# would differ from a fresh run on another CPU. Six digits keep both apart from any difference of rounding size.
STORED_DIGITS = 6


def _short(v: float) -> float:
    return float(f"{v:.{STORED_DIGITS}g}") if math.isfinite(v) else v


def stored_floats(obj):
    """``obj`` (a figure's dict) with every float rounded to ``STORED_DIGITS`` significant digits: plain floats,
    and plotly's typed arrays of floats (``{"dtype": "f8", "bdata": base64, "shape": "r, c"}``), which become nested
    lists; integers, strings and integer typed arrays are left as they are."""
    if isinstance(obj, float):
        return _short(obj)
    if isinstance(obj, (list, tuple)):
        return [stored_floats(x) for x in obj]
    if isinstance(obj, np.ndarray):
        return stored_floats(obj.tolist())
    if isinstance(obj, np.floating):
        return _short(float(obj))
    if isinstance(obj, dict):
        if obj.get("dtype") in ("f4", "f8") and isinstance(obj.get("bdata"), str):
            a = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]).newbyteorder("<"))
            if obj.get("shape"):
                a = a.reshape([int(n) for n in str(obj["shape"]).split(",")])
            return stored_floats(a.astype(float).tolist())
        return {k: stored_floats(v) for k, v in obj.items()}
    return obj


class BookRenderer(MimetypeRenderer):
    """HTML without inlined plotly.js (for the static book) + the plotly JSON mime type (for Jupyter); the figure's
    floats are stored rounded (``stored_floats``), so the stored output is the same on every CPU."""

    def to_mimebundle(self, fig_dict):
        fig_dict = stored_floats(fig_dict)
        fig_json = pio.to_json(fig_dict, validate=False, remove_uids=True)
        div_id = "fig-" + hashlib.sha1(fig_json.encode()).hexdigest()[:12]
        html = pio.to_html(fig_dict, include_plotlyjs=False, full_html=False, div_id=div_id,
                           validate=False, config={"displaylogo": False, "responsive": True})
        return {"text/html": html, "application/vnd.plotly.v1+json": json.loads(fig_json)}


pio.renderers["book"] = BookRenderer()
pio.renderers.default = "book"


def figure(title: str = "", xaxis_title: str = "", yaxis_title: str = "", **layout) -> go.Figure:
    """An empty figure in the book's style. Axis titles should carry units, e.g. "size (MiB)"."""
    fig = go.Figure()
    fig.update_layout(title=title, xaxis_title=xaxis_title, yaxis_title=yaxis_title, **layout)
    return fig
