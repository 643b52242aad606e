"""Horovod's tensor fusion: many small gradient all-reduces packed into a few large ones (chapter 06).

Horovod (Sergeev & Del Balso, arXiv 1802.05799) runs a *ring* all-reduce per message, and a model has hundreds
of small tensors (biases, norms), each of which would pay the ring's 2(p−1) latency-bound steps. Its docs
(docs/tensor-tensor_fusion.rst) give the algorithm: take the ready tensors in order, select the first few that fit in
``HOROVOD_FUSION_THRESHOLD`` bytes and share a dtype, copy them into one fusion buffer, all-reduce the buffer,
copy the slices back; repeat. ``HOROVOD_FUSION_THRESHOLD=0`` turns fusion off. The default was 64 MB and is
128 MiB since Horovod 0.21 (PR #2468).

* :func:`plan_buckets` — that selection rule, pure (for tests and the chapter's table);
* :func:`fused_allreduce` — pack, reduce with *any* in-place all-reduce (the book's ring from
  ``helpers.network.ringallreduce`` in the chapter, ``dist.all_reduce`` as the reference), unpack, average;
* :func:`compare_worker` — on every rank: unfused vs fused vs ``dist.all_reduce``, the same seeded gradients.

The all-reduce is passed in, so this wing does not import the network wing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

HOROVOD_DEFAULT_THRESHOLD_BYTES = 128 * 2**20     # Horovod >= 0.21 (PR #2468); 64 MB before


@dataclass(frozen=True)
class FusionStats:
    threshold_bytes: int
    n_tensors: int
    n_allreduce_calls: int      # collective calls = fusion buffers (or lone tensors)
    messages_sent: int          # point-to-point messages this rank sent, as the all-reduce reported them
    bytes_sent: int             # bytes this rank sent, as the all-reduce reported them
    payload_bytes: int          # sum of the gradients' sizes
    buffer_bytes: int           # largest fusion buffer allocated (0: nothing was packed)


def plan_buckets(sizes_bytes: Sequence[int], dtypes: Sequence[str] | None = None,
                 threshold_bytes: int = HOROVOD_DEFAULT_THRESHOLD_BYTES) -> list[list[int]]:
    """Greedy, in order: a bucket grows while the next tensor has its dtype and still fits in the threshold.
    A tensor larger than the threshold goes alone; ``threshold_bytes=0`` puts every tensor alone."""
    if threshold_bytes < 0:
        raise ValueError(f"threshold_bytes={threshold_bytes}: must be >= 0 (0 disables fusion)")
    dtypes = list(dtypes) if dtypes is not None else ["same"] * len(sizes_bytes)
    if len(dtypes) != len(sizes_bytes):
        raise ValueError(f"{len(sizes_bytes)} sizes but {len(dtypes)} dtypes: give one dtype per tensor")
    buckets: list[list[int]] = []
    fill = 0
    for i, (n, dt) in enumerate(zip(sizes_bytes, dtypes)):
        if n < 0:
            raise ValueError(f"tensor {i} has size {n} bytes: sizes must be >= 0")
        if buckets and dt == dtypes[buckets[-1][0]] and fill + n <= threshold_bytes:
            buckets[-1].append(i)
            fill += n
        else:
            buckets.append([i])
            fill = n
    return buckets


def fused_allreduce(tensors: Sequence, allreduce: Callable, threshold_bytes: int = HOROVOD_DEFAULT_THRESHOLD_BYTES,
                    world_size: int | None = None) -> FusionStats:
    """Average ``tensors`` over the ranks in place, as Horovod does: buckets by :func:`plan_buckets`, each packed
    into one flat buffer and reduced by ``allreduce(buffer)`` (in place, summing; it may return an object with
    ``messages_sent`` and ``bytes_sent``). ``world_size`` (default: the process group's) divides the sum."""
    import torch

    if world_size is None:
        import torch.distributed as dist

        world_size = dist.get_world_size()
    sizes = [t.numel() * t.element_size() for t in tensors]
    buckets = plan_buckets(sizes, [str(t.dtype) for t in tensors], threshold_bytes)
    msgs = sent = biggest = 0
    for b in buckets:
        if len(b) == 1:                                       # a lone tensor is reduced where it lies
            buf = tensors[b[0]].view(-1)
        else:
            buf = torch.cat([tensors[i].reshape(-1) for i in b])   # the fusion buffer
            biggest = max(biggest, buf.numel() * buf.element_size())
        st = allreduce(buf)
        msgs += getattr(st, "messages_sent", 0)
        sent += getattr(st, "bytes_sent", 0)
        buf.div_(world_size)
        if len(b) > 1:
            off = 0
            for i in b:
                n = tensors[i].numel()
                tensors[i].view(-1).copy_(buf[off: off + n])
                off += n
    return FusionStats(threshold_bytes, len(tensors), len(buckets), msgs, sent, sum(sizes), biggest)


def gradient_shapes(n_layers: int = 2, hidden: int = 64) -> list[tuple[int, ...]]:
    """The parameter shapes of a small GPT block stack, in backward order (last layer first), as a DDP or
    Horovod hook sees them become ready: per layer two norms (w, b), QKV and output projections (w, b), MLP."""
    h = hidden
    layer = [(h,), (h,), (3 * h, h), (3 * h,), (h, h), (h,), (h,), (h,), (4 * h, h), (4 * h,), (h, 4 * h), (h,)]
    return [s for _ in range(n_layers) for s in reversed(layer)]


def _grads(rank: int, shapes, device):
    import torch

    g = torch.Generator().manual_seed(2024 + rank)
    return [torch.randn(s, generator=g).to(device) for s in shapes]


def compare_worker(ctx, allreduce: Callable, shapes=None, thresholds=(0, 8192, 65536,
                                                                     HOROVOD_DEFAULT_THRESHOLD_BYTES),
                   repeats: int = 3) -> list[dict]:
    """For each threshold: fuse and reduce this rank's seeded gradients with ``allreduce``; compare with
    ``dist.all_reduce`` of each tensor; time it (median, rank-averaged). One record per threshold (rank 0)."""
    import torch
    import torch.distributed as dist

    from helpers.core import timing

    shapes = shapes or gradient_shapes()
    ref = _grads(ctx.rank, shapes, ctx.device)
    for t in ref:
        dist.all_reduce(t)
        t.div_(ctx.world_size)
    out = []
    for thr in thresholds:
        grads = _grads(ctx.rank, shapes, ctx.device)
        st = fused_allreduce(grads, allreduce, thr, ctx.world_size)
        diff = max((a - b).abs().max().item() for a, b in zip(grads, ref))
        t = timing.time_fn(lambda: fused_allreduce(_grads(ctx.rank, shapes, ctx.device), allreduce, thr,
                                                   ctx.world_size), warmup=1, repeats=repeats, setup=dist.barrier)
        flags = torch.tensor([diff, t.median_s], dtype=torch.float64, device=ctx.device)
        dist.all_reduce(flags[:1], op=dist.ReduceOp.MAX)
        dist.all_reduce(flags[1:])
        out.append({"threshold_bytes": thr, "n_tensors": st.n_tensors, "allreduce_calls": st.n_allreduce_calls,
                    "messages_sent_rank0": st.messages_sent, "bytes_sent_rank0": st.bytes_sent,
                    "payload_bytes": st.payload_bytes, "buffer_bytes": st.buffer_bytes,
                    "max_abs_diff_vs_dist": flags[0].item(), "time_s": flags[1].item() / ctx.world_size})
    return out if ctx.rank == 0 else []


def compare(allreduce: Callable, world_size: int = 2, shapes=None, thresholds=None, backend: str | None = None,
            timeout_s: float = 60) -> list[dict]:
    """``world_size`` ranks (``launch.run``) running :func:`compare_worker`; rank 0's records."""
    from helpers.core import launch

    args = (allreduce, shapes) + ((tuple(thresholds),) if thresholds else ())
    return launch.run(compare_worker, world_size, *args, backend=backend, timeout_s=timeout_s).results[0]
