"""Chapter 02 (hardware selection): datasheet peaks rebuilt from the chip's units, price ratios, the chips and
servers behind the GPUs, host-link times, and how big a checkpoint is.

    from helpers.figures import hardware
    hardware.derive_peaks(hardware.SM_DESIGNS["H200 SXM"], clock_MHz=1980)   # SMs × lanes × 2 × clock
    hardware.price_table({"H200 SXM": 1.0, …})          # your prices → USD per TFLOP/s, per GB, per GB/s
    hardware.hbm_GBps_from_clock(3201, 6016)            # double data rate × bus width

The per-SM unit counts come from NVIDIA's architecture whitepapers (each ``SMDesign`` names its source);
the SM count and clock of a real chip come from its device report (``helpers.core.device``). What the GPU reports
about itself (L2, bus width, shared memory; ``python -m helpers hardware``) is in ``helpers.figures.gpuprops``.
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import specs

_AMPERE = "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"
_HOPPER = "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"


@dataclass(frozen=True)
class SMDesign:
    gpu: str                              # a helpers.core.specs name
    sm_count: int
    fp32_lanes_per_sm: int                # FP32 "CUDA cores" per SM
    fp16_tensor_flop_per_clk_per_sm: int  # dense FP16/BF16 Tensor Core FLOPs per clock per SM (2 per FMA)
    boost_clock_MHz: int | None           # the whitepaper's boost clock, None when it gives none
    source: str


SM_DESIGNS = {
    # A100: 108 SMs × 64 FP32 cores; 4 Tensor Cores/SM × 256 dense FP16 FMA/clock; 1410 MHz boost.
    "A100 SXM4 80GB": SMDesign("A100 SXM4 80GB", 108, 64, 2 * 4 * 256, 1410, _AMPERE),
    # Hopper SXM5: 132 SMs × 128 FP32 cores; the SM's Tensor Cores do 2× A100's dense MMA rate per clock.
    "H100 SXM": SMDesign("H100 SXM", 132, 128, 2 * 2 * 4 * 256, None, _HOPPER),
    "H200 SXM": SMDesign("H200 SXM", 132, 128, 2 * 2 * 4 * 256, None, _HOPPER),
}


@dataclass(frozen=True)
class DerivedPeak:
    gpu: str
    sm_count: int
    clock_MHz: float
    fp32_tflops_derived: float            # SMs × FP32 lanes × 2 (FMA) × clock
    fp32_tflops_datasheet: float | None
    fp16_tflops_derived: float            # SMs × Tensor FLOP/clock/SM × clock
    fp16_tflops_datasheet: float | None
    fp16_datasheet_clock_MHz: float | None  # the clock at which the datasheet's dense FP16 figure is reached


def derive_peaks(design: SMDesign, clock_MHz: float | None = None, sm_count: int | None = None) -> DerivedPeak:
    """Peak FLOP/s from the units of one SM, the number of SMs and the clock. ``clock_MHz``/``sm_count`` default
    to the whitepaper's; pass what the chip itself reports (NVML max SM clock, torch's SM count) to check it."""
    clock = clock_MHz if clock_MHz is not None else design.boost_clock_MHz
    if clock is None or not clock > 0:
        raise ValueError(f"{design.gpu}: clock_MHz={clock_MHz!r}; the whitepaper gives none, so pass the max SM clock "
                         "from the device report (GPUInfo.clock_sm_max_MHz)")
    sms = sm_count or design.sm_count
    spec = specs.lookup(design.gpu)
    fp32 = sms * design.fp32_lanes_per_sm * 2 * clock * 1e6 / 1e12
    fp16 = sms * design.fp16_tensor_flop_per_clk_per_sm * clock * 1e6 / 1e12
    ds16 = spec.fp16_tflops if spec else None
    at = ds16 * 1e12 / (sms * design.fp16_tensor_flop_per_clk_per_sm) / 1e6 if ds16 else None
    return DerivedPeak(design.gpu, sms, clock, fp32, spec.fp32_tflops if spec else None, fp16, ds16, at)


def hbm_GBps_from_clock(mem_clock_MHz: float, bus_width_bits: int) -> float:
    """Peak memory bandwidth: 2 transfers per clock (double data rate) × bus width in bytes × clock."""
    if not (mem_clock_MHz > 0 and bus_width_bits > 0):
        raise ValueError(f"mem_clock_MHz={mem_clock_MHz!r} and bus_width_bits={bus_width_bits!r} must both be > 0")
    return 2 * mem_clock_MHz * 1e6 * bus_width_bits / 8 / 1e9


def price_table(prices_usd: dict[str, float], dtype: str = "bf16"):
    """Datasheet rows with the reader's prices: USD per dense TFLOP/s, per GB of memory, per GB/s of bandwidth.

    Prices are inputs, never facts of this book: a default in a notebook is an illustrative assumption."""
    import pandas as pd

    rows = []
    for name, price in prices_usd.items():
        s = specs.lookup(name)
        if s is None:
            raise ValueError(f"GPU {name!r} is not in the spec table; use one of {[x.name for x in specs.all_specs()]}")
        if not price > 0:
            raise ValueError(f"price for {name!r} is {price!r}: enter a positive number of USD")
        peak = s.peak_tflops(dtype)
        rows.append({"gpu": s.name, "price_USD (your input)": price, f"{dtype}_tflops": peak,
                     "memory_GB": s.memory_GB, "hbm_GBps": s.hbm_GBps, "tdp_W": s.tdp_W,
                     f"USD_per_{dtype}_TFLOPs": price / peak if peak else None,
                     "USD_per_GB_memory": price / s.memory_GB, "USD_per_GBps_memory_bw": price / s.hbm_GBps})
    return pd.DataFrame(rows).set_index("gpu")


def spec_figure(dtype: str = "bf16", ridges=(50, 100, 200, 400)):
    """Every GPU in the spec table as a point: memory bandwidth (x) against dense ``dtype`` peak (y), with lines
    of constant ridge point. A GPU above a line needs kernels more intense than that to reach its peak."""
    from helpers.core import plotting

    rows = [s for s in specs.all_specs() if s.peak_tflops(dtype)]
    fig = plotting.figure(title=f"Datasheet peaks: dense {dtype} against memory bandwidth",
                          xaxis_title="memory bandwidth (GB/s)", yaxis_title=f"dense {dtype} (TFLOP/s)")
    xs = [200, 10_000]
    for r in ridges:
        fig.add_scatter(x=xs, y=[x * r / 1e3 for x in xs], mode="lines+text", text=["", f"ridge {r} FLOP/B"],
                        textposition="top left", textfont=dict(size=9, color="#999999"),
                        line=dict(color="#cccccc", dash="dot"), showlegend=False, hoverinfo="skip")
    fig.add_scatter(x=[s.hbm_GBps for s in rows], y=[s.peak_tflops(dtype) for s in rows], mode="markers+text",
                    text=[s.name for s in rows], textfont=dict(size=10),
                    textposition=["bottom center" if "PCIe" in s.name else "top center" for s in rows],
                    marker=dict(size=[6 + s.memory_GB / 10 for s in rows], color=plotting.SPEC),
                    customdata=[[s.memory_GB, s.ridge_flop_per_byte(dtype)] for s in rows], name="GPU",
                    hovertemplate="%{text}: %{y} TFLOP/s, %{x} GB/s, %{customdata[0]} GB, "
                                  "ridge %{customdata[1]:.0f} FLOP/B<extra></extra>")
    fig.update_xaxes(type="log", range=[2.7, 4.0])
    fig.update_yaxes(type="log")
    return fig


def transfer_figure(live=None, recorded=None, limit_GBps: float | None = None, recorded_label: str = "recorded H200"):
    """Copy bandwidth against size: one line per (source, direction, pinned), and the link limit as a flat line."""
    from helpers.core import plotting, results

    fig = plotting.figure(title="Host↔device copy bandwidth", xaxis_title="copy size (bytes)",
                          yaxis_title="bandwidth (GB/s)")
    dash = {True: "solid", False: "dash"}
    for label, recs, colour in (("this machine", live, plotting.LIVE), (recorded_label, recorded, plotting.RECORDED)):
        if not recs:
            continue
        df = results.table(recs)
        for (direction, pinned), part in df.groupby(["direction", "pinned"], sort=True):
            kind = "pageable" if direction == "h2h" else ("pinned" if pinned else "pageable")
            fig.add_scatter(x=part.size_bytes, y=part.bw_GBps, mode="lines+markers", name=f"{label}: {direction} {kind}",
                            line=dict(color=colour, dash=dash[bool(pinned)],
                                      width=3 if direction in ("h2d", "h2h") else 1.5))
    if limit_GBps:
        fig.add_hline(y=limit_GBps, line=dict(color=plotting.SPEC, dash="dot"),
                      annotation_text=f"link limit {limit_GBps:.1f} GB/s", annotation_position="top left")
    fig.update_xaxes(type="log")
    return fig


def checkpoint_bytes(n_params: float, weight_bytes: float = 2, optimizer_bytes: float = 12) -> float:
    """A full training checkpoint with mixed-precision Adam: 16-bit weights (2 B) + fp32 master weights, momentum
    and variance (12 B) per parameter — ZeRO's 16Ψ model states without the gradients (arXiv:1910.02054 §3)."""
    if not n_params > 0:
        raise ValueError(f"n_params={n_params!r} must be > 0")
    return n_params * (weight_bytes + optimizer_bytes)


# ---------------------------------------------------------------- chips, servers and host links

# Grace Hopper: NVLink-C2C 900 GB/s in total, 450 GB/s each way (NVIDIA Grace Hopper Superchip architecture whitepaper)
NVLINK_C2C_GBPS_PER_DIRECTION = 450.0
GRACE_HOPPER_SOURCE = "https://resources.nvidia.com/en-us-grace-cpu/nvidia-grace-hopper"


def _yaml(name: str) -> list[dict]:
    import yaml
    from pathlib import Path

    rows = yaml.safe_load((Path(__file__).parent / "data" / name).read_text(encoding="utf-8"))
    bad = [r.get("gpu") or r.get("system") for r in rows if not str(r.get("source", "")).startswith("https://")]
    if bad:
        raise ValueError(f"helpers/figures/data/{name}: rows {bad} have no https source; every figure needs one")
    return rows


def chips():
    """The dies behind the GPUs (chips.yaml) with derived columns: transistor density and dense BF16 TFLOP/s per
    billion transistors (from the spec table where it has the GPU)."""
    import pandas as pd

    df = pd.DataFrame(_yaml("chips.yaml")).set_index("gpu")
    df["density_MTr_per_mm2"] = df.transistors_billion * 1e3 / df.die_area_mm2
    df["bf16_tflops"] = [getattr(specs.lookup(g, warn=False), "bf16_tflops", None) for g in df.index]
    df["bf16_tflops_per_billion_tr"] = df.bf16_tflops / df.transistors_billion
    return df


def servers():
    """Eight-GPU servers and boards (servers.yaml), one row each, with the source of every row."""
    import pandas as pd

    return pd.DataFrame(_yaml("servers.yaml")).set_index("system")


def host_link_times(size_bytes: float, measured_GBps: float | None, pcie_gen: int = 5) -> list[dict]:
    """How long ``size_bytes`` takes one way over the measured PCIe copy rate, the PCIe link's own limit and
    Grace Hopper's NVLink-C2C (its datasheet rate: a specification, not a measurement)."""
    if not size_bytes > 0:
        raise ValueError(f"size_bytes={size_bytes!r} must be > 0")
    rows = [("NVLink-C2C (Grace Hopper), datasheet", NVLINK_C2C_GBPS_PER_DIRECTION, GRACE_HOPPER_SOURCE),
            (f"PCIe Gen{pcie_gen} x16 limit after encoding", specs.pcie_GBps(pcie_gen, 16), "PCI-SIG line rates")]
    if measured_GBps:
        rows.append(("PCIe, best pinned copy measured on the H200 machine", measured_GBps, "h200/transfer"))
    return [{"link": n, "GBps_one_way": bw, "time_s": size_bytes / (bw * 1e9), "source": src} for n, bw, src in rows]


def chips_figure(df=None):
    """Transistors (log) against year, marker size by die area, one point per GPU."""
    from helpers.core import plotting

    df = chips() if df is None else df
    fig = plotting.figure(title="Transistors per GPU package", xaxis_title="year",
                          yaxis_title="transistors (billion)")
    fig.add_scatter(x=df.year, y=df.transistors_billion, mode="markers+text", text=list(df.index),
                    textposition="top center", marker=dict(size=14, color=plotting.SPEC), name="GPU",
                    customdata=df[["process", "die"]].values,
                    hovertemplate="%{text}: %{y} B transistors, %{customdata[0]}, %{customdata[1]}<extra></extra>")
    fig.update_yaxes(type="log")
    return fig
