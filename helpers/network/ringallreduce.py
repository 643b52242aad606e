"""All-reduce built from point-to-point messages: the naive way first, then the ring (chapter 08).

* :func:`naive_allreduce` — every rank sends its whole tensor to rank 0, which sums and sends the result back.
  Rank 0 moves 2(p-1)·N bytes; everyone else 2·N. The root's link is the bottleneck.
* :func:`ring_allreduce` — the tensor is cut into p chunks. Reduce-scatter: in p-1 steps each rank sends one
  chunk to its right neighbour and adds the chunk arriving from its left, after which rank r owns the full sum
  of chunk (r+1) mod p. All-gather: p-1 more steps pass the finished chunks around. Every rank sends
  2(p-1)/p·N bytes — the factor nccl-tests calls busbw (Patarasuk & Yuan, JPDC 2009; Baidu's
  "Bringing HPC techniques to deep learning", 2017).

Both work in place on CPU (gloo) and GPU (NCCL) tensors, in the default group or a subgroup, and are checked
against ``dist.all_reduce`` by :func:`check_worker` (tests/network/test_ringallreduce.py: 2, 3 and 4 ranks).

    python -m helpers ringallreduce --world-size 3 --json
    torchrun --nproc_per_node=4 -m helpers ringallreduce
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli


@dataclass(frozen=True)
class P2PStats:
    bytes_sent: int
    bytes_received: int
    messages_sent: int


def ring_schedule(world_size: int) -> list[dict]:
    """The chunk each rank sends and receives at every step (pure; for the chapter's diagram and tests)."""
    p = world_size
    if p < 1:
        raise ValueError(f"world_size={p}: need at least 1 rank")
    rows = []
    for phase, offset in (("reduce-scatter", 0), ("all-gather", 1)):
        for s in range(p - 1):
            for r in range(p):
                rows.append({"phase": phase, "step": s + (p - 1 if offset else 0), "rank": r,
                             "send_chunk": (r - s + offset) % p, "recv_chunk": (r - s - 1 + offset) % p,
                             "to": (r + 1) % p, "from": (r - 1) % p})
    return rows


def _group_info(group):
    import torch.distributed as dist

    p, r = dist.get_world_size(group), dist.get_rank(group)
    glob = (lambda g: g) if group is None else (lambda g: dist.get_global_rank(group, g))
    return p, r, glob


def _exchange(send, recv, to, frm, group) -> None:
    """Send ``send`` to global rank ``to`` while receiving ``recv`` from ``frm`` (both posted before waiting,
    so a ring of blocking sends cannot deadlock)."""
    import torch.distributed as dist

    ops = ([dist.P2POp(dist.isend, send, to, group)] if send.numel() else []) + \
          ([dist.P2POp(dist.irecv, recv, frm, group)] if recv.numel() else [])  # p > count: empty chunks
    for req in dist.batch_isend_irecv(ops) if ops else []:
        req.wait()


def naive_allreduce(tensor, group=None) -> P2PStats:
    """Sum ``tensor`` over the group in place via rank 0 (gather, add, send back)."""
    import torch
    import torch.distributed as dist

    p, r, glob = _group_info(group)
    nbytes = tensor.numel() * tensor.element_size()
    if p == 1:
        return P2PStats(0, 0, 0)
    if r == 0:
        buf = torch.empty_like(tensor)
        for src in range(1, p):
            dist.recv(buf, glob(src), group=group)
            tensor.add_(buf)
        for dst in range(1, p):
            dist.send(tensor, glob(dst), group=group)
        return P2PStats((p - 1) * nbytes, (p - 1) * nbytes, p - 1)
    dist.send(tensor, glob(0), group=group)
    dist.recv(tensor, glob(0), group=group)
    return P2PStats(nbytes, nbytes, 1)


def ring_allreduce(tensor, group=None) -> P2PStats:
    """Sum ``tensor`` over the group in place: reduce-scatter then all-gather around a ring."""
    import torch

    p, r, glob = _group_info(group)
    if p == 1:
        return P2PStats(0, 0, 0)
    flat = tensor.view(-1)                          # a view: chunks write straight into ``tensor``
    chunks = list(torch.tensor_split(flat, p))      # sizes differ by at most one element
    buf = torch.empty(max(c.numel() for c in chunks), dtype=tensor.dtype, device=tensor.device)
    right, left = glob((r + 1) % p), glob((r - 1) % p)
    sent = received = 0
    for s in range(p - 1):                          # reduce-scatter: accumulate the chunk from the left
        out_c, in_c = chunks[(r - s) % p], chunks[(r - s - 1) % p]
        tmp = buf[: in_c.numel()]
        _exchange(out_c, tmp, right, left, group)
        in_c.add_(tmp)
        sent, received = sent + out_c.numel(), received + in_c.numel()
    for s in range(p - 1):                          # all-gather: pass finished chunks on, overwrite
        out_c, in_c = chunks[(r - s + 1) % p], chunks[(r - s) % p]
        tmp = buf[: in_c.numel()]
        _exchange(out_c, tmp, right, left, group)
        in_c.copy_(tmp)
        sent, received = sent + out_c.numel(), received + in_c.numel()
    e = tensor.element_size()
    return P2PStats(sent * e, received * e, 2 * (p - 1))


# ------------------------------------------------------------------ checks and timing on N ranks

def _data(rank: int, count: int, dtype: str, device):
    import torch

    g = torch.Generator().manual_seed(1000 + rank)
    if dtype == "int64":
        return torch.randint(-1000, 1000, (count,), generator=g, dtype=torch.int64).to(device)
    return torch.randn(count, generator=g, dtype=getattr(torch, dtype)).to(device)


def check_worker(ctx, group_sizes=(None,), counts=(1, 7, 1000), dtypes=("int64", "float32")) -> list[dict]:
    """For each group size g (None = all ranks), the first g ranks run ring, naive and dist.all_reduce on the
    same seeded data and compare. Returns one record per (g, dtype, count) from rank 0."""
    import torch
    import torch.distributed as dist

    out = []
    for g in group_sizes:
        g = ctx.world_size if g is None else g
        group = None if g == ctx.world_size else dist.new_group(list(range(g)))  # every rank must call new_group
        if ctx.rank >= g:
            continue
        for dtype in dtypes:
            for count in counts:
                x = _data(ctx.rank, count, dtype, ctx.device)
                ref, ring, naive = x.clone(), x.clone(), x.clone()
                dist.all_reduce(ref, group=group)
                stats = ring_allreduce(ring, group)
                nstats = naive_allreduce(naive, group)
                if dtype == "int64":
                    ok_ring, ok_naive = torch.equal(ring, ref), torch.equal(naive, ref)
                else:  # a different summation order: equal up to rounding
                    tol = dict(rtol=1e-5, atol=1e-5 * g)
                    ok_ring, ok_naive = torch.allclose(ring, ref, **tol), torch.allclose(naive, ref, **tol)
                diff = (ring.double() - ref.double()).abs().max().item() if count else 0.0
                flags = torch.tensor([float(ok_ring), float(ok_naive), diff], dtype=torch.float64, device=ctx.device)
                dist.all_reduce(flags[:2], group=group)
                dist.all_reduce(flags[2:], op=dist.ReduceOp.MAX, group=group)
                out.append({"world_size": g, "dtype": dtype, "count_elems": count, "ring_equal": flags[0].item() == g,
                            "naive_equal": flags[1].item() == g, "max_abs_diff": flags[2].item(),
                            "ring_bytes_sent_rank0": stats.bytes_sent,
                            "naive_bytes_sent_rank0": nstats.bytes_sent})
    return out if ctx.rank == 0 else []


def timing_worker(ctx, sizes_bytes=(2**16, 2**20), warmup: int = 2, iters: int = 5) -> list[dict]:
    """Median time of naive, ring and dist.all_reduce on float32 tensors of each size (rank-averaged)."""
    import torch
    import torch.distributed as dist

    from helpers.core import timing

    dev = torch.device(ctx.device)
    impls = {"naive (via rank 0)": naive_allreduce, "ring (send/recv)": ring_allreduce,
             f"dist.all_reduce ({ctx.backend})": lambda t: dist.all_reduce(t)}
    out = []
    for size in sizes_bytes:
        x = _data(ctx.rank, max(1, size // 4), "float32", dev)
        for name, fn in impls.items():
            t = timing.time_fn(lambda: fn(x), device=dev if dev.type == "cuda" else None, warmup=warmup,
                               repeats=iters, setup=dist.barrier)
            med = torch.tensor([t.median_s], dtype=torch.float64, device=dev)
            dist.all_reduce(med)
            out.append({"impl": name, "world_size": ctx.world_size, "size_bytes": x.numel() * 4,
                        "time_s": med.item() / ctx.world_size})
    return out if ctx.rank == 0 else []


def compare(world_size: int = 2, sizes_bytes=(2**16, 2**20), backend: str | None = None, timeout_s: float = 120):
    """``world_size`` ranks (``launch.run``: spawned, or torchrun's); (check records, timing records) — one
    process start for both."""
    from helpers.core import launch

    res = launch.run(both_worker, world_size, tuple(sizes_bytes), backend=backend, timeout_s=timeout_s)
    return res.results[0]


def both_worker(ctx, sizes_bytes):
    return check_worker(ctx), timing_worker(ctx, sizes_bytes)


def main(argv=None) -> int:
    from helpers.core import launch, results

    ap = argparse.ArgumentParser(prog="python -m helpers ringallreduce", description=__doc__.split("\n")[0])
    launch.add_args(ap, 2)
    ap.add_argument("--sizes", type=cli.size_bytes(4, 2**34), nargs="+", default=[2**16, 2**20], help="bytes")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    checks, times = compare(a.world_size, a.sizes, a.backend, a.timeout)
    launch.emit(times, "ringallreduce", a, checks=checks)
    bad = [c for c in checks if not (c["ring_equal"] and c["naive_equal"])]
    return 1 if bad else 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
