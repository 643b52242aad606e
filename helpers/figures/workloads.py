"""Chapter 01 (GPU cluster overview, "Typical workloads"): three workloads as small models whose compute, memory,
network and storage profiles are *computed* from stated, sourced inputs, not asserted.

    from helpers.figures import workloads
    ws = [workloads.llm_training(), workloads.video_analytics(), workloads.hpc_stencil()]
    node = workloads.NodeBandwidth()                      # per-GPU NIC bandwidths of a DGX H100/H200
    table = workloads.profile_table(ws, "H200 SXM", node)  # intensities and GB/s per GPU at the target rate
    workloads.shares_figure(ws, "H200 SXM", node)          # which resource each workload loads most

Every workload is reduced to four numbers per *item* (a token, a video frame, a grid-cell update): FLOPs, bytes
read or written in HBM, bytes sent to other GPUs, bytes read from or written to storage. The target rate is the
roofline's, min(u_c·peak/FLOPs, u_m·HBM/bytes); multiplying it by the per-item bytes gives each network's GB/s.
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import specs
from helpers.formulas import comm, flops

SOURCES = {
    "kaplan": "https://arxiv.org/abs/2001.08361",             # 6N training FLOPs per token
    "llama2": "https://arxiv.org/abs/2307.09288",             # global batch of 4M tokens
    "zero": "https://arxiv.org/abs/1910.02054",               # 16 bytes per parameter, mixed-precision Adam
    "ring": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/operations.html",  # 2(G-1)/G
    "resnet": "https://arxiv.org/abs/1512.03385",             # ResNet-50: 3.8e9 multiply-adds (Table 1)
    "youtube": "https://support.google.com/youtube/answer/1722171",  # 1080p 30 fps upload: 8 Mbps
    "roofline": "https://doi.org/10.1145/1498765.1498785",    # 7-point stencil: 8 FLOPs, 24 bytes per point
    "dgx": "https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html",
}


@dataclass(frozen=True)
class Workload:
    name: str
    item: str                       # what one item is
    dtype: str                      # the arithmetic it runs in: "bf16" or "fp64"
    flops_per_item: float
    hbm_bytes_per_item: float | None  # None: compute-bound by construction (large GEMMs/convolutions)
    network_bytes_per_item: float   # sent to other GPUs, per GPU
    storage_bytes_per_item: float   # read + written on storage, per GPU
    per_second_unit: str            # how to read the rate, e.g. "streams at 30 fps"
    per_second_divisor: float
    inputs: str                     # the stated inputs, with their sources


@dataclass(frozen=True)
class NodeBandwidth:
    """Per-GPU bandwidths of a DGX H100/H200 [dgx]: 8 single-port ConnectX-7 at 400 Gb/s for the compute fabric
    (one per GPU) and 2 dual-port ConnectX-7, up to 400 Gb/s each, for storage, shared by the 8 GPUs."""
    compute_net_GBps: float = 400e9 / 8 / 1e9            # 50 GB/s per GPU
    storage_net_GBps: float = 2 * 400e9 / 8 / 1e9 / 8    # 12.5 GB/s per GPU
    source: str = SOURCES["dgx"]


def llm_training(n_params: float = 7e9, n_gpus: int = 1024, global_batch_tokens: float = 4e6,
                 grad_bytes: int = 2, token_bytes: int = 4, ckpt_bytes_per_param: int = 16,
                 ckpt_every_steps: int = 1000, gpus_per_node: int = 1) -> Workload:
    """Pure data-parallel LLM pretraining: 6N FLOPs per token [kaplan]; each step a ring all-reduce of the BF16
    gradients, 2(G-1)/G · grad_bytes · N sent per GPU [ring], shared by the B/G tokens that GPU processed
    (B = 4M tokens, Llama 2 [llama2]); storage: the token ids (4 B each, a 128k vocabulary needs 32 bits) plus a
    checkpoint of 16 B per parameter [zero] every ``ckpt_every_steps`` steps, written in equal shares.
    ``gpus_per_node`` > 1: hierarchical all-reduce (reduce-scatter over NVLink first), so each GPU's NIC carries
    1/gpus_per_node of the gradients across the n_gpus/gpus_per_node nodes."""
    for name, v in (("n_params", n_params), ("n_gpus", n_gpus), ("global_batch_tokens", global_batch_tokens),
                    ("ckpt_every_steps", ckpt_every_steps)):
        if not v > 0:
            raise ValueError(f"{name}={v!r}: must be > 0")
    tokens_per_gpu_step = global_batch_tokens / n_gpus
    if tokens_per_gpu_step < 1:
        raise ValueError(f"global_batch_tokens={global_batch_tokens:g} over n_gpus={n_gpus}: fewer than one token "
                         "per GPU per step; raise the batch or use fewer GPUs")
    if n_gpus % gpus_per_node:
        raise ValueError(f"n_gpus={n_gpus} is not a multiple of gpus_per_node={gpus_per_node}")
    nodes = n_gpus // gpus_per_node
    sent_per_step = comm.ring_allreduce_bytes(grad_bytes * n_params / gpus_per_node, nodes)
    ckpt_per_token = ckpt_bytes_per_param * n_params / (ckpt_every_steps * global_batch_tokens)
    return Workload(
        f"LLM training ({n_params / 1e9:g}B, {n_gpus} GPUs)", "token", "bf16",
        flops.training_flops_per_token(n_params), None, sent_per_step / tokens_per_gpu_step,
        token_bytes + ckpt_per_token, "tokens/s", 1.0,
        f"6N FLOPs/token [{SOURCES['kaplan']}]; batch {global_batch_tokens:g} tokens [{SOURCES['llama2']}]; "
        f"ring all-reduce 2(G-1)/G·{grad_bytes}N B [{SOURCES['ring']}]; checkpoint {ckpt_bytes_per_param} B/param "
        f"[{SOURCES['zero']}] every {ckpt_every_steps} steps; {token_bytes} B per token id")


def video_analytics(multiply_adds: float = 3.8e9, bitrate_bps: float = 8e6, fps: float = 30.0) -> Workload:
    """Camera streams decoded and classified frame by frame with a ResNet-50 (3.8e9 multiply-adds = 7.6e9 FLOPs
    per 224×224 frame [resnet]); each frame arrives compressed at bitrate/fps bytes (1080p at 30 fps: 8 Mbps
    [youtube]). Frames are independent: nothing is exchanged between GPUs."""
    if not (multiply_adds > 0 and bitrate_bps > 0 and fps > 0):
        raise ValueError(f"multiply_adds={multiply_adds}, bitrate_bps={bitrate_bps}, fps={fps}: all must be > 0")
    return Workload(
        "video analytics (ResNet-50)", "frame", "bf16", 2 * multiply_adds, None, 0.0, bitrate_bps / 8 / fps,
        f"streams at {fps:g} fps", fps,
        f"{multiply_adds:g} multiply-adds/frame [{SOURCES['resnet']}]; {bitrate_bps / 1e6:g} Mbps at {fps:g} fps "
        f"[{SOURCES['youtube']}]; no GPU-to-GPU exchange")


def hpc_stencil(n: int = 512, flops_per_cell: float = 8, hbm_bytes_per_cell: float = 24,
                value_bytes: int = 8, output_every_steps: int = 1000) -> Workload:
    """A 3-D 7-point FP64 stencil (8 FLOPs and 24 bytes of DRAM traffic per point [roofline]) on an n³ block per
    GPU: each step sends the 6 faces (6·n² values) to its neighbours; every ``output_every_steps`` steps the
    block (n³ values) is written to storage."""
    if not (isinstance(n, int) and n >= 2 and output_every_steps > 0):
        raise ValueError(f"n={n!r}, output_every_steps={output_every_steps!r}: need a whole n ≥ 2 and a positive "
                         "output interval")
    return Workload(
        f"HPC stencil (FP64, {n}³ per GPU)", "cell update", "fp64", flops_per_cell, hbm_bytes_per_cell,
        6 * value_bytes / n, value_bytes / output_every_steps, "steps/s", float(n) ** 3,
        f"{flops_per_cell:g} FLOPs, {hbm_bytes_per_cell:g} B per point [{SOURCES['roofline']}]; halo 6·n² × "
        f"{value_bytes} B per step; output every {output_every_steps} steps")


def _peak_tflops(spec: specs.GPUSpec, dtype: str) -> float:
    peak = {"bf16": spec.bf16_tflops, "fp64": spec.fp64_tc_tflops or spec.fp64_tflops}.get(dtype)
    if not peak:
        raise ValueError(f"{spec.name} has no {dtype!r} peak in the spec table; use dtype 'bf16' or 'fp64'")
    return peak


@dataclass(frozen=True)
class Profile:
    workload: str
    item: str
    flop_per_hbm_byte: float | None
    flop_per_network_byte: float | None   # None: nothing sent
    flop_per_storage_byte: float
    items_per_s: float                   # per GPU, at the target rate
    rate: str                            # the same rate in the workload's own unit
    compute_tflops: float
    network_GBps: float                  # per GPU
    storage_GBps: float                  # per GPU
    shares: dict                         # resource → fraction of the GPU's or the node's bandwidth in use
    binds: str                           # the resource with the largest share


def profile(w: Workload, gpu: str = "H200 SXM", node: NodeBandwidth | None = None, mfu: float = 0.40,
            hbm_efficiency: float = 0.80) -> Profile:
    """The roofline target rate of ``w`` on one ``gpu`` (``mfu`` of the dtype's dense peak, or ``hbm_efficiency``
    of HBM bandwidth when the workload is memory-bound), and what it then asks of each network, per GPU."""
    if not (0 < mfu <= 1 and 0 < hbm_efficiency <= 1):
        raise ValueError(f"mfu={mfu}, hbm_efficiency={hbm_efficiency}: both must be in (0, 1]")
    spec = specs.lookup(gpu)
    if spec is None:
        raise ValueError(f"unknown GPU {gpu!r}; known: {[s.name for s in specs.all_specs()]}")
    node = node or NodeBandwidth()
    peak = _peak_tflops(spec, w.dtype) * 1e12
    rate = mfu * peak / w.flops_per_item
    if w.hbm_bytes_per_item:
        rate = min(rate, hbm_efficiency * spec.hbm_GBps * 1e9 / w.hbm_bytes_per_item)
    net, sto = rate * w.network_bytes_per_item / 1e9, rate * w.storage_bytes_per_item / 1e9
    shares = {"compute": rate * w.flops_per_item / peak,
              "HBM": rate * w.hbm_bytes_per_item / (spec.hbm_GBps * 1e9) if w.hbm_bytes_per_item else 0.0,
              "compute network": net / node.compute_net_GBps, "storage network": sto / node.storage_net_GBps}
    div = lambda a, b: a / b if b else None  # noqa: E731
    return Profile(w.name, w.item, div(w.flops_per_item, w.hbm_bytes_per_item),
                   div(w.flops_per_item, w.network_bytes_per_item), w.flops_per_item / w.storage_bytes_per_item,
                   rate, f"{rate / w.per_second_divisor:,.3g} {w.per_second_unit}", rate * w.flops_per_item / 1e12,
                   net, sto, shares, max(shares, key=shares.get))


def profile_table(ws: list[Workload], gpu: str = "H200 SXM", node: NodeBandwidth | None = None, **kw):
    """One row per workload: intensities (FLOP per byte of HBM, network, storage), the target rate, and the GB/s
    of each network per GPU with its share of the node's NIC bandwidth."""
    import pandas as pd

    rows = []
    for w in ws:
        p = profile(w, gpu, node, **kw)
        rows.append({"workload": p.workload, "FLOP/item": w.flops_per_item, "FLOP/HBM byte": p.flop_per_hbm_byte,
                     "FLOP/network byte": p.flop_per_network_byte, "FLOP/storage byte": p.flop_per_storage_byte,
                     "rate per GPU": p.rate, "TFLOP/s": p.compute_tflops, "network GB/s": p.network_GBps,
                     "storage GB/s": p.storage_GBps, "network share": p.shares["compute network"],
                     "storage share": p.shares["storage network"], "binds": p.binds})
    return pd.DataFrame(rows).set_index("workload")


def shares_figure(ws: list[Workload], gpu: str = "H200 SXM", node: NodeBandwidth | None = None, **kw):
    """Grouped bars: for each workload at its target rate, the share of the GPU's compute and HBM and of the
    node's per-GPU compute-network and storage bandwidth it uses (log scale; above 1 = that resource caps it)."""
    from helpers.core import plotting

    fig = plotting.figure(title=f"What each workload asks of one {gpu} and its share of a DGX node's NICs",
                          yaxis_title="share of the resource in use (log scale)", barmode="group")
    profs = [profile(w, gpu, node, **kw) for w in ws]
    for i, res in enumerate(("compute", "HBM", "compute network", "storage network")):
        fig.add_bar(x=[p.workload for p in profs], y=[max(p.shares[res], 1e-6) for p in profs], name=res,
                    marker_color=plotting.COLORS[i % len(plotting.COLORS)],
                    hovertemplate="%{x}: %{y:.3g}<extra>" + res + "</extra>")
    fig.add_hline(y=1.0, line_dash="dash", annotation_text="fully used")
    fig.update_yaxes(type="log")
    return fig
