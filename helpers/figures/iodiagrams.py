"""Diagrams and small models for the storage chapters, drawn by code (chapters 04, 11 and 23).

* ``cluster_storage_figure()`` — where data lives in a GPU cluster: node page cache and local NVMe, the
  storage network, a parallel file system (metadata + object storage servers), an object store (chapter 04).
* ``stripe_layout`` / ``stripe_figure`` — how a Lustre-style file system spreads a file over OSTs: stripe k of
  ``stripe_size`` bytes goes to OST ``(start + k) mod stripe_count`` of the file's OSTs (chapter 04).
* ``simulate_loader`` / ``loader_figure`` — an event model of PyTorch's DataLoader: ``num_workers`` processes,
  batch i assigned to worker i mod N, at most ``prefetch_factor × N`` batches outstanding, the training
  loop consuming batches in order (chapter 11).
* ``paths_figure(paths)`` — ``helpers.storage.storagepath``'s storage → GPU paths, hop by hop, each arrow coloured
  by what moves the bytes (DMA, CPU copy, network) (chapter 23).
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import plotting
from helpers.storage import storagepath as sp


def _box(fig, x0, y0, x1, y1, text, colour):
    fig.add_shape(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line=dict(color=colour, width=2),
                  fillcolor=colour, opacity=0.15)
    fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=text, showarrow=False, font=dict(size=11))


def _arrow(fig, x0, y0, x1, y1, text=""):
    fig.add_annotation(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                       arrowhead=3, arrowwidth=2, arrowcolor="#444", text="")
    if text:
        fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=text, showarrow=False,
                           font=dict(size=10, color="#444"), bgcolor="white")


def cluster_storage_figure(n_nodes: int = 3, n_oss: int = 4):
    """The storage side of a GPU cluster, top (GPU) to bottom (cold data)."""
    c = plotting.COLORS
    fig = plotting.figure(title="Where training data lives in a GPU cluster")
    w = 10 / n_nodes
    for i in range(n_nodes):
        x = i * w
        _box(fig, x + 0.2, 7.2, x + w - 0.2, 8.4, f"GPU node {i}<br>GPUs · HBM", c[0])
        _box(fig, x + 0.2, 5.9, x + w - 0.2, 6.9, "host DRAM<br>page cache", c[1])
        _box(fig, x + 0.2, 4.8, x + w - 0.2, 5.6, "local NVMe (cache)", c[2])
        _arrow(fig, x + w / 2, 4.8, x + w / 2, 4.1)
    _box(fig, 0.2, 3.4, 9.8, 4.1, "storage network (InfiniBand / RoCE / Ethernet)", "#888888")
    _box(fig, 0.2, 1.9, 2.2, 3.0, "metadata<br>server (MDS)", c[4])
    ow = 7.4 / n_oss
    for j in range(n_oss):
        _box(fig, 2.4 + j * ow, 1.9, 2.4 + (j + 1) * ow - 0.15, 3.0, f"OSS {j}<br>OSTs", c[3])
    _arrow(fig, 5, 3.4, 5, 3.0, "parallel file system: hot data, checkpoints")
    _box(fig, 0.2, 0.2, 9.8, 1.2, "object store (S3-style): datasets at rest, old checkpoints — the cold tier", c[5])
    _arrow(fig, 5, 1.9, 5, 1.2, "tiering / lifecycle")
    fig.update_xaxes(visible=False, range=[0, 10])
    fig.update_yaxes(visible=False, range=[0, 8.6])
    fig.update_layout(height=520, margin=dict(l=10, r=10))
    return fig


@dataclass(frozen=True)
class Stripe:
    index: int
    ost: int
    file_offset_bytes: int
    size_bytes: int


def stripe_layout(file_bytes: int, stripe_size_bytes: int = 2**20, stripe_count: int = 4,
                  ost_count: int = 8, start_ost: int = 0) -> list[Stripe]:
    """Round-robin striping (RAID-0 over OSTs), as ``lfs setstripe -S size -c count`` lays a file out."""
    if not 1 <= stripe_count <= ost_count:
        raise ValueError(f"stripe_count={stripe_count}: need 1 ≤ stripe_count ≤ ost_count={ost_count}")
    if stripe_size_bytes < 65536 or stripe_size_bytes % 65536:
        raise ValueError(f"stripe_size_bytes={stripe_size_bytes}: Lustre needs a multiple of 64 KiB")
    osts = [(start_ost + k) % ost_count for k in range(stripe_count)]
    out, off, k = [], 0, 0
    while off < file_bytes:
        n = min(stripe_size_bytes, file_bytes - off)
        out.append(Stripe(k, osts[k % stripe_count], off, n))
        off, k = off + n, k + 1
    return out


def bytes_per_ost(stripes: list[Stripe]) -> dict[int, int]:
    d: dict[int, int] = {}
    for s in stripes:
        d[s.ost] = d.get(s.ost, 0) + s.size_bytes
    return dict(sorted(d.items()))


def stripe_figure(stripes: list[Stripe]):
    fig = plotting.figure(title="A file striped over OSTs (each bar = one stripe)",
                          xaxis_title="file offset (MiB)", yaxis_title="OST")
    for s in stripes:
        fig.add_bar(x=[s.size_bytes / 2**20], base=[s.file_offset_bytes / 2**20], y=[f"OST {s.ost}"],
                    orientation="h", marker_color=plotting.COLORS[s.ost % len(plotting.COLORS)],
                    showlegend=False, hovertext=f"stripe {s.index}")
    fig.update_layout(barmode="overlay", height=300)
    return fig


@dataclass(frozen=True)
class LoaderSim:
    num_workers: int
    prefetch_factor: int
    load_s: float                   # one worker's time to produce one batch
    step_s: float                   # the training step's time per batch
    n_batches: int
    total_s: float
    batches_per_s: float
    gpu_idle_fraction: float        # share of total_s the training loop waited for data
    events: tuple                   # (row, batch, start_s, end_s): row "worker k" or "train step"


def simulate_loader(num_workers: int, load_s: float, step_s: float, prefetch_factor: int = 2,
                    n_batches: int = 24) -> LoaderSim:
    """Event model of DataLoader: worker ``i mod N`` loads batch i once it is dispatched; the first
    ``prefetch_factor × N`` are dispatched at start, then one more each time the loop takes a batch.
    With ``num_workers=0`` the loop loads and steps in turn."""
    if num_workers < 0 or prefetch_factor < 1 or load_s < 0 or step_s < 0 or n_batches < 1:
        raise ValueError(f"num_workers={num_workers}, prefetch_factor={prefetch_factor}, load_s={load_s}, "
                         f"step_s={step_s}, n_batches={n_batches}: need ≥ 0 workers, ≥ 1 prefetch and batch")
    ev, t, idle = [], 0.0, 0.0
    if num_workers == 0:
        for i in range(n_batches):
            ev.append(("main: load", i, t, t + load_s))
            ev.append(("train step", i, t + load_s, t + load_s + step_s))
            t += load_s + step_s
            idle += load_s
    else:
        window = prefetch_factor * num_workers
        dispatch = [0.0] * min(window, n_batches) + [None] * max(0, n_batches - window)
        worker_free = [0.0] * num_workers
        ready = [0.0] * n_batches
        main = 0.0
        for i in range(n_batches):
            # batches up to i are dispatched by now; load every dispatched batch not yet simulated
            w = i % num_workers
            start = max(worker_free[w], dispatch[i])
            ready[i] = start + load_s
            worker_free[w] = ready[i]
            ev.append((f"worker {w}", i, start, ready[i]))
            take = max(main, ready[i])
            idle += take - main
            if i + window < n_batches:
                dispatch[i + window] = take
            ev.append(("train step", i, take, take + step_s))
            main = take + step_s
        t = main
    return LoaderSim(num_workers, prefetch_factor, load_s, step_s, n_batches, round(t, 6),
                     round(n_batches / t, 3) if t else float("inf"), round(idle / t, 4) if t else 0.0, tuple(ev))


def loader_figure(sim: LoaderSim):
    fig = plotting.figure(title=f"DataLoader timeline: {sim.num_workers} workers, prefetch_factor "
                                f"{sim.prefetch_factor}, GPU idle {sim.gpu_idle_fraction:.0%}",
                          xaxis_title="time (s)", yaxis_title="")
    for row, b, s, e in sim.events:
        colour = plotting.COLORS[1] if row == "train step" else plotting.COLORS[b % 2 * 2]
        fig.add_bar(x=[e - s], base=[s], y=[row], orientation="h", marker_color=colour, showlegend=False,
                    text=[str(b)], textposition="inside", hovertext=f"batch {b}")
    fig.update_layout(barmode="overlay", height=160 + 30 * (max(sim.num_workers, 1) + 1))
    fig.update_yaxes(categoryorder="category descending")
    return fig


def paths_figure(paths):
    """Each ``storagepath.StoragePath`` as a row of boxes (where the bytes are), joined by arrows coloured by
    hop kind."""
    colour = {sp.DMA: plotting.COLORS[0], sp.CPU: plotting.COLORS[3], sp.NET: plotting.COLORS[2]}
    fig = plotting.figure(title="Storage → GPU paths: hops, kinds and bandwidths",
                          xaxis_title="hop number along the path", yaxis_title="")
    for k, c in colour.items():                                     # legend entries
        fig.add_scatter(x=[None], y=[None], mode="lines", line=dict(color=c, width=4), name=k)
    for row, p in enumerate(reversed(paths)):
        nodes = [p.hops[0].src] + [h.dst for h in p.hops]
        for i, h in enumerate(p.hops):
            fig.add_annotation(x=i + 1, y=row, ax=i, ay=row, xref="x", yref="y", axref="x", ayref="y",
                               showarrow=True, arrowhead=3, arrowwidth=3, arrowcolor=colour[h.kind], text="")
            fig.add_annotation(x=i + 0.5, y=row + 0.22, text=f"{h.bw_GBps:.3g} GB/s", showarrow=False,
                               font=dict(size=10, color=colour[h.kind]))
        fig.add_scatter(x=list(range(len(nodes))), y=[row] * len(nodes), mode="markers+text", text=nodes,
                        textposition="bottom center", marker=dict(size=14, color="#444", symbol="square"),
                        showlegend=False, textfont=dict(size=9))
    fig.update_yaxes(tickvals=list(range(len(paths))), ticktext=[p.name for p in reversed(paths)],
                     range=[-0.6, len(paths) - 0.4])
    fig.update_xaxes(range=[-0.5, max(len(p.hops) for p in paths) + 0.5], dtick=1)
    fig.update_layout(height=120 + 75 * len(paths), margin=dict(l=330))
    return fig
