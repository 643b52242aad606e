"""The roofline model: ceilings, kernels placed by arithmetic intensity, and its figure (chapter 28; used in 10, 15).

Attainable performance P = min(π, β·I) (Williams, Waterman & Patterson, CACM 52(4), 2009): π the compute
ceiling (FLOP/s, one per dtype), β a memory ceiling (B/s, one per level: HBM/DRAM and, in the hierarchical
roofline of Yang et al. 2020, L2/LLC), I = FLOPs ÷ bytes moved at that level. The *ridge point* π/β is the
intensity where a kernel stops being memory-bound.

    roof = roofline.from_spec(specs.lookup("NVIDIA H200"))            # datasheet ceilings
    live = roofline.from_bench(records, "this machine (measured)")    # ceilings measured by helpers.compute.bench
    ks = [roofline.gemm_kernel(8192, 8192, 8192, "bf16"), roofline.stream_kernel("triad", 2**28)]
    roofline.figure([(roof, ks), (live, roofline.kernels_from_bench(records))])    # plotly, with menus
    roofline.widget([(roof, ks), …])                                  # ipywidgets, for a live notebook

Units: compute ceilings in TFLOP/s (10^12 FLOP/s), memory ceilings in GB/s (10^9 B/s), intensity in FLOP/byte.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

BYTES = {"fp64": 8, "fp64_tc": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


@dataclass(frozen=True)
class Roofline:
    device: str                                   # what the ceilings describe, e.g. "H200 SXM (datasheet)"
    compute_tflops: tuple[tuple[str, float], ...]  # (dtype, TFLOP/s), fastest last is not required
    memory_GBps: tuple[tuple[str, float], ...]     # (level, GB/s); the first is main memory (HBM/DRAM)
    source: str = ""

    def __post_init__(self):
        if not self.compute_tflops or not self.memory_GBps:
            raise ValueError(f"{self.device}: a roofline needs at least one compute and one memory ceiling")
        for name, v in (*self.compute_tflops, *self.memory_GBps):
            if not v > 0:
                raise ValueError(f"{self.device}: ceiling {name!r} = {v!r} must be > 0")

    @property
    def dtypes(self) -> list[str]:
        return [d for d, _ in self.compute_tflops]

    @property
    def levels(self) -> list[str]:
        return [lv for lv, _ in self.memory_GBps]

    def peak_tflops(self, dtype: str) -> float:
        for d, v in self.compute_tflops:
            if d == dtype:
                return v
        raise KeyError(f"{self.device} has no {dtype!r} ceiling; it has {self.dtypes}")

    def bw_GBps(self, level: str | None = None) -> float:
        level = level or self.levels[0]
        for lv, v in self.memory_GBps:
            if lv == level:
                return v
        raise KeyError(f"{self.device} has no {level!r} memory ceiling; it has {self.levels}")

    def attainable_tflops(self, intensity: float, dtype: str, level: str | None = None) -> float:
        """min(π, β·I): GB/s × FLOP/byte = GFLOP/s, hence the 1e-3 to TFLOP/s."""
        if intensity < 0:
            raise ValueError(f"intensity={intensity!r} FLOP/byte must be ≥ 0")
        return min(self.peak_tflops(dtype), self.bw_GBps(level) * intensity * 1e-3)

    def ridge(self, dtype: str, level: str | None = None) -> float:
        """The intensity (FLOP/byte) where the slope meets the roof: π/β."""
        return self.peak_tflops(dtype) * 1e3 / self.bw_GBps(level)


@dataclass(frozen=True)
class Kernel:
    name: str
    flop: float
    traffic_bytes: float                 # bytes moved to/from main memory (or the level named in ``note``)
    dtype: str
    achieved_tflops: float | None = None  # measured rate, when there is one
    note: str = field(default="", compare=False)

    @property
    def intensity(self) -> float:
        return self.flop / self.traffic_bytes

    def time_s(self, roof: Roofline, level: str | None = None) -> float:
        """The roofline's time prediction: max(FLOPs ÷ π, bytes ÷ β)."""
        return max(self.flop / (roof.peak_tflops(self.dtype) * 1e12), self.traffic_bytes / (roof.bw_GBps(level) * 1e9))

    def bound(self, roof: Roofline, level: str | None = None) -> str:
        return "compute" if self.intensity >= roof.ridge(self.dtype, level) else "memory"


# ---------------------------------------------------------------- ceilings

def from_spec(spec, dtypes=("fp32", "tf32", "bf16", "fp8")) -> Roofline:
    """Datasheet ceilings of a ``helpers.core.specs.GPUSpec`` (dtypes the datasheet leaves empty are left out;
    fp16 is left out by default because every datasheet in the table gives it the bf16 rate)."""
    comp = tuple((d, float(spec.peak_tflops(d))) for d in dtypes if spec.peak_tflops(d))
    return Roofline(f"{spec.name} (datasheet)", comp, (("HBM", float(spec.hbm_GBps)),), source=spec.source)


def from_bench(records, device: str) -> Roofline:
    """Measured ceilings from ``helpers.compute.bench`` records (objects or JSON dicts): the best GEMM per dtype
    (MAMF method) and the best STREAM bandwidth per level (HBM/DRAM, L2/LLC)."""
    g = lambda r, k: r[k] if isinstance(r, dict) else getattr(r, k)  # noqa: E731
    comp: dict[str, float] = {}
    for r in records:
        if g(r, "kind") == "gemm" and g(r, "method") == "mamf":
            comp[g(r, "dtype")] = max(comp.get(g(r, "dtype"), 0.0), g(r, "tflops"))
    gpu = any(not str(g(r, "device")).startswith("CPU") for r in records if g(r, "kind") == "membw")
    names = {"memory": "HBM" if gpu else "DRAM", "cache": "L2" if gpu else "LLC"}
    mem: dict[str, float] = {}
    for r in records:
        if g(r, "kind") == "membw":
            lv = names[g(r, "level")]
            mem[lv] = max(mem.get(lv, 0.0), g(r, "bw_GBps"))
    order = [d for d in BYTES if d in comp]
    return Roofline(device, tuple((d, comp[d]) for d in order),
                    tuple((lv, mem[lv]) for lv in names.values() if lv in mem), source="helpers.compute.bench")


# ---------------------------------------------------------------- kernels, counted analytically

def gemm_kernel(m: int, n: int, k: int, dtype: str = "bf16", name: str | None = None) -> Kernel:
    """C = A·B: 2mnk FLOPs; each matrix read or written once (the ideal a tiled kernel approaches)."""
    b = BYTES[dtype]
    return Kernel(name or f"GEMM {m}×{n}×{k}", 2.0 * m * n * k, float(b * (m * k + k * n + m * n)), dtype)


def stream_kernel(op: str, n: int, dtype: str = "fp32") -> Kernel:
    """A STREAM kernel on n elements, counted as STREAM counts it (helpers.compute.membw.OPS)."""
    words, flops = {"copy": (2, 0), "scale": (2, 1), "add": (3, 1), "triad": (3, 2), "dot": (2, 2)}[op]
    return Kernel(f"STREAM {op}", float(flops * n), float(words * n * BYTES[dtype]), dtype)


def elementwise_kernel(name: str, n: int, flops_per_element: float, words_per_element: float,
                       dtype: str = "bf16") -> Kernel:
    """Any element-wise op: LayerNorm ≈ 8 FLOPs and 2 words per element, GELU ≈ 14 and 2, a residual add 1 and 3."""
    return Kernel(name, flops_per_element * n, words_per_element * n * BYTES[dtype], dtype)


def kernels_from_bench(records, min_flop: float = 1.0) -> list[Kernel]:
    """One measured kernel per GEMM (best shape per dtype) and per STREAM op with FLOPs (copy has none)."""
    from helpers.compute import gemm as _gemm

    g = lambda r, k: r[k] if isinstance(r, dict) else getattr(r, k)  # noqa: E731
    out = []
    for dt in BYTES:
        r = _gemm.best(records, dt)
        if r is not None:
            m, n, k = g(r, "m"), g(r, "n"), g(r, "k")
            b_in, b_out = BYTES[dt], 2 if dt == "fp8" else BYTES[dt]      # fp8 GEMMs here write bf16
            out.append(Kernel(f"GEMM {dt} {g(r, 'shape')}", 2.0 * m * n * k,
                              float(b_in * (m * k + k * n) + b_out * m * n), dt, g(r, "tflops")))
    for r in records:
        if g(r, "kind") == "membw" and g(r, "flop") >= min_flop and g(r, "backend") != "numpy":
            out.append(Kernel(f"{g(r, 'op')} ({g(r, 'level')})", float(g(r, "flop")), float(g(r, "size_bytes")),
                              "fp32", g(r, "flop") / g(r, "time_s") / 1e12, note=g(r, "backend")))
    return out


# ---------------------------------------------------------------- the figure

def line_points(x_range, ridge: float) -> list[float]:
    """Where a roof line is sampled: one point per decade plus the ridge. The line is straight on log axes on each
    side of the ridge, so this draws it exactly, keeps a hover value every decade, and is ~25× smaller in the page
    than 201 evenly spaced points."""
    lo, hi = math.log10(x_range[0]), math.log10(x_range[1])
    xs = {10 ** k for k in range(math.ceil(lo), math.floor(hi) + 1)} | {x_range[0], x_range[1]}
    if x_range[0] < ridge < x_range[1]:
        xs.add(ridge)
    return sorted(xs)


def figure(views, x_range=(1e-2, 1e4), title="Roofline"):
    """A log-log plotly figure of several (Roofline, kernels) views, with two menus built into the figure:
    "one device, every dtype" (coloured by dtype) and "one dtype, every device" (coloured by device).
    Measured kernels (filled) sit at their achieved rate, counted ones (open) on the roof they would reach.
    Works in the static book: the menus are plotly.js, no Python kernel needed."""
    from helpers.core import plotting

    if not views:
        raise ValueError("figure() needs at least one (Roofline, kernels) view")
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
        cols = [t[2] if by_dtype else t[3] for t in tags]
        modes = ["lines" if t[4] == "roof" else "markers+text" if by_dtype or t[4] == "ridge" else "markers"
                 for t in tags]
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
    fig.update_xaxes(type="log", range=[math.log10(x_range[0]), math.log10(x_range[1])])
    fig.update_yaxes(type="log")
    return fig


def widget(views):
    """An ipywidgets explorer for a live notebook: pick device, dtype and your kernel's intensity; the figure
    and the verdict (bound, attainable TFLOP/s) follow. Widgets need a running kernel; the book shows figure()."""
    try:
        import ipywidgets as w
    except ImportError as e:  # optional: the static figure does the same job without a kernel
        raise ImportError("ipywidgets is not installed (pip install ipywidgets); use roofline.figure()") from e
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
        mine = Kernel("your kernel", x.value, 1.0, d)
        fig = figure([(Roofline(roof.device, ((d, roof.peak_tflops(d)),), roof.memory_GBps), [*ks, mine])])
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
