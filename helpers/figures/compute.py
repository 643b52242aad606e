"""Figures of the compute chapters, drawn from the ``helpers.compute`` models and records (chapters 01, 15, 28;
the roofline also in 10).

* :func:`roofline_figure` — ``compute.roofline`` views (ceilings + kernels) log-log, with device and dtype menus
  that work in the static book (chapters 01, 28); :func:`roofline_widget` — the same as live ipywidgets (chapter 28);
* :func:`sweep_figure` / :func:`hroofline_figure` — ``compute.hroofline``'s working-set sweep and the hierarchical
  roofline, one slope per measured level (chapter 28);
* :func:`node_diagram` — which ``compute.bench`` benchmark measures which part of a GPU node, with the datasheet
  limit of each (chapter 15).

    from helpers.figures import compute as compfig
    compfig.roofline_figure([(roofline.from_spec(specs.lookup("H200")), kernels)], title="H200 roofline")
"""
from __future__ import annotations

import math

from helpers.compute import hroofline, roofline
from helpers.core import plotting, specs
from helpers.formulas.roofline import line_points


def roofline_figure(views, x_range=(1e-2, 1e4), title="Roofline"):
    """A log-log plotly figure of several (Roofline, kernels) views, with two menus built into the figure:
    "one device, every dtype" (coloured by dtype) and "one dtype, every device" (coloured by device).
    Measured kernels (filled) sit at their achieved rate, counted ones (open) on the roof they would reach.
    Works in the static book: the menus are plotly.js, no Python kernel needed."""
    if not views:
        raise ValueError("roofline_figure() needs at least one (Roofline, kernels) view")
    fig = plotting.figure(title=title, xaxis_title="arithmetic intensity (FLOP/byte)",
                          yaxis_title="performance (TFLOP/s)")
    dtypes = list(dict.fromkeys(dt for roof, _ in views for dt in roof.dtypes))
    dt_color = {dt: plotting.COLORS[i % len(plotting.COLORS)] for i, dt in enumerate(dtypes)}
    tags: list[tuple[int, str, str, str, str]] = []   # per trace: view, dtype, colour by dtype, by device, role
    dash = ["solid", "dash", "dot", "dashdot"]
    for vi, (roof, kernels) in enumerate(views):
        vcol = plotting.COLORS[vi % len(plotting.COLORS)]
        for dt in roof.dtypes:
            c = dt_color[dt] if vi == 0 else vcol
            for li, lv in enumerate(roof.levels):
                xs = line_points(x_range, roof.ridge(dt, lv))
                ys = [roof.attainable_tflops(x, dt, lv) for x in xs]
                fig.add_scatter(x=xs, y=ys, mode="lines", line=dict(color=c, dash=dash[li % 4], width=2.5 - 0.4 * li),
                                name=f"{roof.device} · {dt} · {lv}", legendgroup=f"{vi}",
                                hovertemplate=f"{roof.device}<br>{dt}, {lv}: %{{y:.3g}} TFLOP/s at %{{x:.3g}} FLOP/B"
                                              "<extra></extra>")
                tags.append((vi, dt, dt_color[dt], vcol, "roof"))
            x_r = roof.ridge(dt)
            fig.add_scatter(x=[x_r], y=[roof.peak_tflops(dt)], mode="markers+text", text=[f"{dt} ridge {x_r:.3g}"],
                            marker=dict(color=c, size=9, symbol="diamond"),
                            textposition="top left" if vi % 2 == 0 else "bottom right",   # neighbours apart
                            showlegend=False, hovertemplate=f"ridge {x_r:.3g} FLOP/B<extra>{roof.device}</extra>")
            tags.append((vi, dt, dt_color[dt], vcol, "ridge"))
            ks = [k for k in kernels if k.dtype == dt]
            if ks:
                ys = [k.achieved_tflops if k.achieved_tflops is not None else roof.attainable_tflops(k.intensity, dt)
                      for k in ks]
                fig.add_scatter(x=[k.intensity for k in ks], y=ys, mode="markers+text", text=[k.name for k in ks],
                                textposition=["bottom left" if k.intensity > 0.03 * x_range[1] else "bottom right"
                                              for k in ks], textfont=dict(size=10), legendgroup=f"{vi}",
                                marker=dict(color=c, size=10, symbol=["circle" if k.achieved_tflops is not None
                                                                      else "circle-open" for k in ks]),
                                name=f"kernels · {roof.device} · {dt}",
                                hovertemplate="%{text}: %{x:.3g} FLOP/B, %{y:.3g} TFLOP/s<extra></extra>")
                tags.append((vi, dt, dt_color[dt], vcol, "kernels"))

    def view(visible, by_dtype):          # a device view labels its kernels; a dtype view only on hover
        # hidden traces get the shortest values (another button restyles them before they show): every button
        # carries one entry per trace, so this keeps a many-device figure light on a phone
        cols = [(t[2] if by_dtype else t[3]) if v else "#000" for t, v in zip(tags, visible)]
        modes = [("lines" if t[4] == "roof" else "markers+text" if by_dtype or t[4] == "ridge" else "markers")
                 if v else "lines" for t, v in zip(tags, visible)]
        return {"visible": visible, "line.color": cols, "marker.color": cols, "mode": modes}

    by_dev = [dict(label=roof.device, method="update",
                   args=[view([t[0] == vi for t in tags], True), {"title.text": f"{title}: {roof.device}, every dtype"}])
              for vi, (roof, _) in enumerate(views)]
    by_dt = [dict(label=dt, method="update",
                  args=[view([t[1] == dt for t in tags], False), {"title.text": f"{title}: {dt} on every device"}])
             for dt in dtypes]
    # the dtype menu starts on "every dtype", the view the figure opens with, so menu and title agree
    by_dt.insert(0, dict(label="every dtype", method="update",
                         args=[view([t[0] == 0 for t in tags], True),
                               {"title.text": f"{title}: {views[0][0].device}, every dtype"}]))
    shown = [t for t in tags if t[4] != "ridge"]            # traces with a legend entry
    legend_rows = max([sum(t[0] == vi for t in shown) for vi in range(len(views))] +
                      [sum(t[1] == dt for t in shown) for dt in dtypes])
    menu = dict(direction="down", y=1.1, yanchor="bottom", xanchor="left", showactive=True)
    fig.update_layout(
        updatemenus=[dict(buttons=by_dev, x=0.08, active=0, **menu), dict(buttons=by_dt, x=0.62, active=0, **menu)],
        annotations=[dict(text="device:", x=0.0, xref="paper", y=1.13, yref="paper", showarrow=False, xanchor="left"),
                     dict(text="dtype:", x=0.56, xref="paper", y=1.13, yref="paper", showarrow=False, xanchor="left")],
        margin=dict(t=150, b=60), height=620 + 18 * legend_rows,
        legend=dict(font=dict(size=10), orientation="h", x=0, xanchor="left", y=-0.14, yanchor="top"),
        title=dict(text=f"{title}: {views[0][0].device}, every dtype", y=0.97))
    for tr, t in zip(fig.data, tags):
        tr.visible = t[0] == 0
        # 4 significant digits (hover shows 3): full float reprs made the figure pages heavy on a phone
        tr.x, tr.y = ([float(f"{v:.4g}") for v in vals] for vals in (tr.x, tr.y))
    fig.update_xaxes(type="log", range=[math.log10(x_range[0]), math.log10(x_range[1])])
    fig.update_yaxes(type="log")
    return fig


def roofline_widget(views):
    """An ipywidgets explorer for a live notebook: pick device, dtype and your kernel's intensity; the figure
    and the verdict (bound, attainable TFLOP/s) follow. Widgets need a running kernel; the book shows
    roofline_figure()."""
    try:
        import ipywidgets as w
    except ImportError as e:  # optional: the static figure does the same job without a kernel
        raise ImportError("ipywidgets is not installed (pip install ipywidgets); use roofline_figure()") from e
    names = {roof.device: (roof, ks) for roof, ks in views}
    dev = w.Dropdown(options=list(names), description="device")
    dt = w.Dropdown(options=views[0][0].dtypes, description="dtype")
    x = w.FloatLogSlider(value=10.0, base=10, min=-2, max=4, step=0.05, description="FLOP/byte")
    out = w.Output()

    def new_device(*_):
        dt.options = names[dev.value][0].dtypes       # fires redraw through dt's observer

    def redraw(*_):
        roof, ks = names[dev.value]
        d = dt.value if dt.value in roof.dtypes else roof.dtypes[0]
        mine = roofline.Kernel("your kernel", x.value, 1.0, d)
        one = roofline.Roofline(roof.device, ((d, roof.peak_tflops(d)),), roof.memory_GBps)
        fig = roofline_figure([(one, [*ks, mine])])
        # set the outputs directly: ``with out:`` capture confuses notebook runners that store no widget state
        out.outputs = ()
        out.append_stdout(f"{d} on {roof.device}: {mine.bound(roof)}-bound, attainable "
                          f"{roof.attainable_tflops(x.value, d):.4g} TFLOP/s (ridge {roof.ridge(d):.4g} FLOP/byte)\n")
        out.append_display_data(fig)

    dev.observe(new_device, names="value")
    for c in (dt, x):
        c.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([dev, dt, x]), out])


def sweep_figure(points: list[hroofline.SweepPoint], levels: list[hroofline.Level],
                 title: str = "Working-set sweep"):
    """Bandwidth against working set (log-log), each level's capacity a dashed line."""
    fig = plotting.figure(title=title, xaxis_title="working set (bytes)", yaxis_title="bandwidth (GB/s)")
    for dev in dict.fromkeys(p.device for p in points):
        ps = [p for p in points if p.device == dev]
        fig.add_scatter(x=[p.working_set_bytes for p in ps], y=[p.bw_GBps for p in ps], mode="lines+markers",
                        name=dev, text=[p.level or "between levels" for p in ps])
    for lv in levels[:-1]:
        fig.add_vline(x=lv.capacity_bytes, line_dash="dash", line_color="gray",
                      annotation_text=lv.name, annotation_position="top")
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


MARKERS = {"L1": "circle", "L1d": "circle", "L2": "square", "L3": "diamond", "HBM": "triangle-up",
           "DRAM": "triangle-up"}


def hroofline_figure(ceils: list[hroofline.Ceiling], roofs: list[tuple[str, float]], kernels: list[dict] = (),
                     title: str = "Hierarchical roofline", x_range=(1e-2, 1e4)):
    """One slope per measured level, flat compute roofs (name, TFLOP/s), and each kernel once per level.

    ``kernels``: dicts with ``name``, ``tflops`` and ``intensity`` = {level: FLOP/byte}; a kernel's points share
    its achieved TFLOP/s and sit at different intensities, joined by a line (the gaps are its cache reuse)."""
    if not ceils or not roofs:
        raise ValueError("hroofline_figure: give at least one measured ceiling and one compute roof")
    top = max(t for _, t in roofs)
    fig = plotting.figure(title=title, xaxis_title="arithmetic intensity (FLOP/byte)",
                          yaxis_title="performance (TFLOP/s)")
    for c in ceils:                 # a straight slope, then flat at the top roof (formulas.roofline.line_points says why)
        xs = line_points(x_range, top * 1e3 / c.bw_GBps)
        fig.add_scatter(x=xs, y=[min(top, c.bw_GBps * x / 1e3) for x in xs], mode="lines",
                        name=f"{c.level} {c.bw_GBps:,.0f} GB/s", line={"dash": "solid" if c is ceils[-1] else "dot"})
    for name, t in roofs:
        fig.add_scatter(x=[x_range[0], x_range[1]], y=[t, t], mode="lines", name=f"{name} {t:,.0f} TFLOP/s",
                        line={"color": "gray", "width": 1})
    for k in kernels:
        lv = [c.level for c in ceils if c.level in k["intensity"]]
        fig.add_scatter(x=[k["intensity"][n] for n in lv], y=[k["tflops"]] * len(lv), mode="lines+markers",
                        name=k["name"], marker={"symbol": [MARKERS.get(n, "x") for n in lv], "size": 9},
                        text=lv, hovertemplate="%{text}: I = %{x:.3g} FLOP/B, %{y:.3g} TFLOP/s")
    fig.update_xaxes(type="log", range=[math.log10(x_range[0]), math.log10(x_range[1])])
    fig.update_yaxes(type="log")
    return fig


def node_diagram(gpu: str = "NVIDIA H200"):
    """Which benchmark measures which part of a GPU node, with the datasheet limit of each (helpers.core.specs)."""
    s = specs.lookup(gpu, warn=False)
    if s is None:
        raise ValueError(f"gpu={gpu!r} is not in helpers/core/data/gpu_specs.yaml: pass a name it knows, e.g. 'H200'")
    boxes = {"GPU: Tensor Cores, SMs": (0.6, 3.2), "HBM": (0.6, 1.4), "other GPUs": (3.2, 3.2), "CPU": (3.2, 1.4),
             "DRAM": (5.8, 1.4), "NIC → other nodes": (5.8, 3.2), "NVMe, file system": (3.2, -0.2)}
    links = [("GPU: Tensor Cores, SMs", "HBM", "bench membw", f"{s.hbm_GBps:,.0f} GB/s"),
             ("HBM", "CPU", "bench copy", f"PCIe gen{s.pcie_gen} x{s.pcie_lanes}: {s.pcie_GBps:.0f} GB/s each way"),
             ("GPU: Tensor Cores, SMs", "other GPUs", "all-reduce, nccl-tests", f"NVLink {s.nvlink_GBps:,.0f} GB/s"),
             ("CPU", "DRAM", "STREAM on the host", ""), ("CPU", "NIC → other nodes", "iperf, ib_write_bw", ""),
             ("CPU", "NVMe, file system", "fio, helpers.storage.iobench", "")]
    fig = plotting.figure(title=f"What each benchmark measures, with the {s.name} datasheet limits", height=460)
    for a, b, what, limit in links:
        (x0, y0), (x1, y1) = boxes[a], boxes[b]
        fig.add_scatter(x=[x0, x1], y=[y0, y1], mode="lines", line=dict(color=plotting.SPEC, width=3),
                        hoverinfo="skip", showlegend=False)
        fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=f"<b>{what}</b><br>{limit}", showarrow=False,
                           font=dict(size=11), bgcolor="rgba(255,255,255,0.9)")
    for name, (x, y) in boxes.items():
        fig.add_shape(type="rect", x0=x - 0.6, x1=x + 0.6, y0=y - 0.3, y1=y + 0.3,
                      line=dict(color=plotting.LIVE), fillcolor="#eaf1f7")
        fig.add_annotation(x=x, y=y, text=name, showarrow=False, font=dict(size=12))
    fig.add_annotation(x=0.6, y=3.75, showarrow=False, font=dict(size=11),
                       text=f"<b>bench gemm</b>: {s.bf16_tflops:,.0f} TFLOP/s bf16 dense")
    fig.add_annotation(x=3.2, y=4.25, showarrow=False, font=dict(size=12),
                       text="<b>whole system</b>: HPL (fp64 solve), MLPerf (time to train, queries/s)")
    fig.update_xaxes(visible=False, range=[-0.2, 6.6])
    fig.update_yaxes(visible=False, range=[-0.7, 4.5])
    return fig
