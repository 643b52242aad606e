"""Figures of chapters 10 and 25, drawn from the ``helpers.kernels`` records (plotly, through helpers.core.plotting).

* :func:`memory_hierarchy` — capacity of each level of a Hopper GPU, per SM and per GPU, from a device-properties
  record (the recorded H200, or the live GPU) and the H100 whitepaper's per-SM figures where no query gives them;
* :func:`accesses` — sectors per request (global) and bank ways (shared) from ``simt.analyse``;
* :func:`gemm_roofline` — GEMM records placed by arithmetic intensity under the datasheet roofline of each dtype;
* :func:`timeline` — the stream timeline of ``gpulaunch.overlap`` (one row per CUDA stream);
* :func:`occupancy_sweep` — resident warps against block size for one kernel's registers.
"""
from __future__ import annotations

from helpers.core import plotting
from helpers.formulas.dtypes import bytes_per_element
from helpers.formulas.flops import gemm_bytes, gemm_flops
from helpers.formulas.roofline import attainable_tflops, line_points, ridge_flop_per_byte

# Hopper SM (H100 whitepaper, "NVIDIA H100 Tensor Core GPU Architecture", 2022): per SM 256 KB register file,
# 256 KB combined L1 / shared memory (up to 228 KB shared), 4 fourth-generation Tensor Cores, 128 FP32 lanes.
HOPPER_SM = {"register_file_bytes": 256 * 1024, "l1_shared_bytes": 256 * 1024, "tensor_cores": 4, "fp32_lanes": 128,
             "source": "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)"}


def memory_hierarchy(props: dict, hbm_GBps: float | None = None):
    """Bars of capacity per level for the whole GPU (log scale). ``props`` has sm_count, regs_per_sm,
    shared_mem_per_sm_bytes, l2_cache_bytes, total_memory_bytes (as ``gpu_properties`` records do)."""
    need = ("sm_count", "regs_per_sm", "shared_mem_per_sm_bytes", "l2_cache_bytes", "total_memory_bytes")
    missing = [k for k in need if props.get(k) is None]
    if missing:
        raise ValueError(f"props lacks {missing}: pass a gpu_properties record (helpers device --out)")
    sms = props["sm_count"]
    levels = [("registers", props["regs_per_sm"] * 4 * sms, f"{props['regs_per_sm']:,} × 4 B per SM, private to a thread"),
              ("shared memory / L1", HOPPER_SM["l1_shared_bytes"] * sms,
               f"{props['shared_mem_per_sm_bytes'] // 1024} KiB usable as shared per SM, per block of threads"),
              ("L2 cache", props["l2_cache_bytes"], "shared by all SMs"),
              ("HBM", props["total_memory_bytes"], f"{hbm_GBps:,.0f} GB/s datasheet" if hbm_GBps else "device memory")]
    fig = plotting.figure(title=f"Memory hierarchy of one {props.get('name', 'GPU')} ({sms} SMs): capacity per level",
                          height=380)
    fig.add_bar(x=[lv[0] for lv in levels], y=[lv[1] for lv in levels], text=[lv[2] for lv in levels],
                marker_color=plotting.LIVE, hovertemplate="%{x}: %{y:.3s}B<br>%{text}<extra></extra>")
    fig.update_yaxes(type="log", title="bytes (whole GPU, log scale)")
    fig.update_xaxes(title="level (faster and smaller to the left)")
    return fig


def accesses(stats: list, title: str = "Memory requests counted in the simulator"):
    """Sectors per request of every global array and bank ways of every shared one, per kernel."""
    g = [s for s in stats if s.space == "global"]
    sh = [s for s in stats if s.space == "shared"]
    fig = plotting.figure(title=title, height=380)
    fig.add_bar(x=[f"{s.kernel}: {s.array} {s.op}" for s in g], y=[s.sectors_per_request for s in g],
                name="global: 32-B sectors per warp request (4 = ideal for fp32)", marker_color=plotting.LIVE)
    fig.add_bar(x=[f"{s.kernel}: {s.array} {s.op}" for s in sh], y=[s.bank_ways_max for s in sh],
                name="shared: bank ways per request (1 = conflict-free)", marker_color=plotting.SPEC)
    fig.update_yaxes(title="per warp-wide request", type="log")
    fig.update_layout(legend=dict(orientation="h", y=-0.45))
    return fig


def gemm_roofline(records: list[dict], peaks: dict[str, float], hbm_GBps: float, title: str):
    """Each GEMM record at intensity 2mnk / (bytes of A, B, C; C written in 2 bytes) under min(peak, intensity ×
    HBM bandwidth) (``helpers.formulas``), the roofs drawn from 1 to 10^5 FLOP/byte."""
    import math

    fig = plotting.figure(title=title, height=420)
    for dt, pk in peaks.items():
        xs = line_points((1.0, 1e5), ridge_flop_per_byte(pk, hbm_GBps))
        fig.add_scatter(x=xs, y=[attainable_tflops(x, pk, hbm_GBps) for x in xs], mode="lines", name=f"{dt} roof",
                        line=dict(dash="dot"))
    for dt in peaks:
        rs = [r for r in records if r["dtype"] == dt]
        if not rs:
            continue
        b = bytes_per_element(dt)
        ai = [gemm_flops(r["m"], r["n"], r["k"]) / gemm_bytes(r["m"], r["n"], r["k"], b, 2) for r in rs]   # C in 2 B
        fig.add_scatter(x=ai, y=[r["tflops"] for r in rs], mode="markers", name=f"{dt} measured",
                        text=[f"{r['method']} {r['shape']}" for r in rs], marker=dict(size=9))
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP per byte of HBM traffic)")
    fig.update_yaxes(type="log", title="TFLOP/s", range=[0, math.log10(max(peaks.values()) * 1.5)])
    return fig


def timeline(rows, title: str):
    """Horizontal bars per CUDA stream: (stream, name, start_us, duration_us) rows of gpulaunch.overlap."""
    fig = plotting.figure(title=title, height=300)
    for kind, color in (("Memcpy", plotting.SPEC), ("", plotting.LIVE)):
        sel = [r for r in rows if (r[1].startswith("Memcpy") if kind else not r[1].startswith("Memcpy"))]
        fig.add_bar(y=[f"stream {r[0]}" for r in sel], x=[r[3] for r in sel], base=[r[2] for r in sel],
                    orientation="h", name="host→device copy" if kind else "kernel", marker_color=color,
                    text=[r[1] for r in sel], hovertemplate="%{text}: %{x:.0f} µs<extra></extra>")
    fig.update_xaxes(title="time since the first event (µs)")
    fig.update_layout(barmode="overlay")
    return fig


def occupancy_sweep(results: list, title: str):
    """Resident warps per SM against threads per block (``occupancy.sweep`` results), coloured by limiter."""
    fig = plotting.figure(title=title, height=340)
    fig.add_bar(x=[str(o.threads_per_block) for o in results], y=[o.active_warps for o in results],
                text=[f"{o.occupancy_pct:.0f} % · {o.limiter}" for o in results], marker_color=plotting.LIVE)
    fig.update_xaxes(title="threads per block")
    fig.update_yaxes(title="resident warps per SM (max 64)", range=[0, 68])
    return fig
