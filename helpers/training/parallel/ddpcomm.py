"""Data-parallel communication inside DDP: gradient buckets that overlap the backward pass, and gradient
compression with DDP communication hooks (chapter 08).

* :func:`bucket_sweep` — DistributedDataParallel groups gradients into buckets of ``bucket_cap_mb`` and starts
  each bucket's all-reduce as soon as its gradients are ready, while backward continues (Li et al., "PyTorch
  Distributed", VLDB 2020, arXiv:2006.15704). For each cap we time a full step (forward + backward + the
  all-reduces), the same step without communication (``no_sync``), and one all-reduce of all gradients alone;
  what the step costs beyond compute is the *exposed* communication, the rest was hidden by overlap.
* :func:`compression` — the same tiny seeded model trained with the default all-reduce, ``fp16_compress_hook``
  and PowerSGD (Vogels et al., NeurIPS 2019, arXiv:1905.13727) at two ranks; the bytes every hook hands to
  ``all_reduce`` are counted, and the loss and held-out accuracy show what the compression costs.

    python -m helpers ddpcomm buckets --world-size 2 --json
    python -m helpers ddpcomm compression --world-size 2
    torchrun --nproc_per_node=2 -m helpers ddpcomm buckets
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli

HOOKS = ("allreduce", "fp16", "powersgd_r1", "powersgd_r4")


@dataclass(frozen=True)
class BucketResult:
    backend: str             # gloo (CPU ranks) or nccl (one GPU per rank)
    world_size: int
    bucket_cap_mb: float
    n_buckets: int
    grad_bytes: int
    step_s: float            # forward + backward with DDP's bucketed all-reduces (median, rank-averaged)
    compute_s: float         # the same step under no_sync(): no communication
    comm_s: float            # one all-reduce of all gradients, nothing else running
    exposed_comm_s: float    # step_s - compute_s: communication the step could not hide
    hidden_fraction: float   # 1 - exposed/comm, clipped to [0, 1]


@dataclass(frozen=True)
class CompressionResult:
    hook: str
    bytes_per_step: float    # bytes handed to all_reduce per step, after PowerSGD's warm-up steps
    bytes_vs_allreduce: float
    loss_last10: float       # mean training loss of the last 10 steps
    test_accuracy: float


def mlp(width: int, depth: int, n_in: int | None = None, n_out: int | None = None, seed: int = 0):
    """``depth`` Linear+ReLU layers (the same weights on every rank: seeded)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    dims = [n_in or width] + [width] * (depth - 1) + [n_out or width]
    layers = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class _Counter:
    """Counts calls and bytes that go through ``torch.distributed.all_reduce`` in this process (the DDP hooks
    call it by that name), then restores the original."""

    def __enter__(self):
        import torch.distributed as dist

        self.calls, self.nbytes, self._orig = 0, 0, dist.all_reduce

        def counted(tensor, *a, **k):
            self.calls += 1
            self.nbytes += tensor.numel() * tensor.element_size()
            return self._orig(tensor, *a, **k)

        dist.all_reduce = counted
        return self

    def __exit__(self, *exc):
        import torch.distributed as dist

        dist.all_reduce = self._orig


def _counting_allreduce_hook(state, bucket):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    return default_hooks.allreduce_hook(None, bucket)


def bucket_worker(ctx, caps_mb=(0.25, 1.0, 4.0, 25.0), width: int = 256, depth: int = 16, batch: int = 64,
                  warmup: int = 2, iters: int = 5) -> list[dict]:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from helpers.core import results, timing

    torch.set_num_threads(1)                        # one core per rank: ranks do not fight over cores
    dev = torch.device(ctx.device)
    tdev = dev if dev.type == "cuda" else None
    ids = [dev.index] if dev.type == "cuda" else None
    torch.manual_seed(0)
    x = torch.randn(batch, width, device=dev)
    out = []
    for cap in caps_mb:
        model = DDP(mlp(width, depth).to(dev), device_ids=ids, bucket_cap_mb=cap)
        grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())

        def step():
            model.zero_grad(set_to_none=True)
            model(x).square().mean().backward()

        def step_nosync():
            with model.no_sync():
                step()

        step()                                      # first step: DDP rebuilds its buckets in ready order
        t_step = timing.time_fn(step, device=tdev, warmup=warmup, repeats=iters, setup=dist.barrier)
        t_comp = timing.time_fn(step_nosync, device=tdev, warmup=warmup, repeats=iters, setup=dist.barrier)
        flat = torch.zeros(grad_bytes // 4, device=dev)
        t_comm = timing.time_fn(lambda: dist.all_reduce(flat), device=tdev, warmup=warmup, repeats=iters,
                                setup=dist.barrier)
        probe = DDP(mlp(width, depth).to(dev), device_ids=ids, bucket_cap_mb=cap)
        probe.register_comm_hook(None, _counting_allreduce_hook)     # one hook call per bucket
        for _ in range(2):
            probe.zero_grad(set_to_none=True)
            with _Counter() as c:
                probe(x).square().mean().backward()
        agg = torch.tensor([t_step.median_s, t_comp.median_s, t_comm.median_s], dtype=torch.float64, device=dev)
        dist.all_reduce(agg)
        s, comp, comm = (agg / ctx.world_size).tolist()
        exposed = s - comp
        hidden = min(1.0, max(0.0, 1 - exposed / comm)) if comm > 0 else 0.0
        out.append(BucketResult(ctx.backend, ctx.world_size, cap, c.calls, grad_bytes, s, comp, comm, exposed, hidden))
        del model, probe
    return [results.to_dict(r) for r in out] if ctx.rank == 0 else []


def _blobs(n: int, seed: int, n_in: int = 32, classes: int = 4):
    """A seeded 4-class Gaussian-mixture dataset: (features, labels)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, n_in, generator=torch.Generator().manual_seed(123)) * 0.35
    y = torch.randint(0, classes, (n,), generator=g)
    return centres[y] + torch.randn(n, n_in, generator=g), y


def _hook(name: str, ddp) -> None:
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd

    if name == "allreduce":
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    elif name == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif name.startswith("powersgd_r"):
        state = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=int(name[len("powersgd_r"):]),
                                   start_powerSGD_iter=2, random_seed=0)
        ddp.register_comm_hook(state, psgd.powerSGD_hook)
    else:
        raise ValueError(f"hook={name!r}: choose one of {HOOKS}")


def compression_worker(ctx, hooks=HOOKS, steps: int = 60, batch: int = 32, lr: float = 0.05) -> list[dict]:
    import torch
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    from helpers.core import results

    torch.set_num_threads(1)
    dev = torch.device(ctx.device)
    ids = [dev.index] if dev.type == "cuda" else None
    xs, ys = _blobs(steps * batch, seed=ctx.rank)                # each rank its own shard of the data
    xt, yt = _blobs(2000, seed=999)                              # the same held-out set everywhere
    out, base = [], None
    for name in hooks:
        ddp = DDP(mlp(64, 3, n_in=32, n_out=4).to(dev), device_ids=ids)
        _hook(name, ddp)
        opt = torch.optim.SGD(ddp.parameters(), lr=lr, momentum=0.9)
        counted, losses = [], []
        for i in range(steps):
            xb, yb = xs[i * batch:(i + 1) * batch].to(dev), ys[i * batch:(i + 1) * batch].to(dev)
            opt.zero_grad(set_to_none=True)
            with _Counter() as c:
                loss = F.cross_entropy(ddp(xb), yb)
                loss.backward()
            if i >= 2:                                           # PowerSGD compresses from step 2 on
                counted.append(c.nbytes)
            opt.step()
            losses.append(loss.item())
        with torch.no_grad():
            acc = (ddp.module(xt.to(dev)).argmax(1) == yt.to(dev)).float().mean().item()
        nbytes = sum(counted) / len(counted)
        base = nbytes if name == "allreduce" else base
        out.append(CompressionResult(name, nbytes, nbytes / base if base else float("nan"),
                                     sum(losses[-10:]) / len(losses[-10:]), acc))
    return [results.to_dict(r) for r in out] if ctx.rank == 0 else []


def bucket_sweep(world_size: int = 2, caps_mb=(0.25, 1.0, 4.0, 25.0), backend: str | None = None,
                 timeout_s: float = 180, **kw) -> list[dict]:
    from helpers.core import launch

    return list(launch.run(bucket_worker, world_size, tuple(caps_mb), *_kw(kw, "bucket"),
                           backend=backend, timeout_s=timeout_s).results[0])


def compression(world_size: int = 2, hooks=HOOKS, backend: str | None = None, timeout_s: float = 180,
                **kw) -> list[dict]:
    from helpers.core import launch

    if "allreduce" not in hooks:
        raise ValueError(f"hooks={hooks}: include 'allreduce' (the baseline the others are compared with)")
    hooks = ("allreduce",) + tuple(h for h in hooks if h != "allreduce")
    return list(launch.run(compression_worker, world_size, hooks, *_kw(kw, "compression"),
                           backend=backend, timeout_s=timeout_s).results[0])


def labs_worker(ctx, caps_mb, hooks, bucket_kw: dict, compression_kw: dict):
    """Both labs in one process start (on a laptop, starting ranks costs more than the labs themselves)."""
    return (bucket_worker(ctx, tuple(caps_mb), *_kw(bucket_kw, "bucket")),
            compression_worker(ctx, tuple(hooks), *_kw(compression_kw, "compression")))


def labs(world_size: int = 2, caps_mb=(0.25, 1.0, 4.0, 25.0), hooks=HOOKS, backend: str | None = None,
         timeout_s: float = 240, bucket_kw: dict | None = None, compression_kw: dict | None = None):
    """(bucket_sweep records, compression records) from one start of ``world_size`` ranks (``launch.run``)."""
    from helpers.core import launch

    hooks = ("allreduce",) + tuple(h for h in hooks if h != "allreduce")
    _kw(bucket_kw or {}, "bucket"), _kw(compression_kw or {}, "compression")      # fail early on bad names
    res = launch.run(labs_worker, world_size, tuple(caps_mb), hooks, bucket_kw or {},
                     compression_kw or {}, backend=backend, timeout_s=timeout_s)
    return tuple(list(x) for x in res.results[0])


def _kw(kw, mode):
    names = {"bucket": ("width", "depth", "batch", "warmup", "iters"), "compression": ("steps", "batch", "lr")}[mode]
    bad = set(kw) - set(names)
    if bad:
        raise TypeError(f"unexpected argument(s) {sorted(bad)}; {mode} accepts {names}")
    defaults = {"bucket": (256, 16, 64, 2, 5), "compression": (60, 32, 0.05)}[mode]
    return tuple(kw.get(n, d) for n, d in zip(names, defaults))


def main(argv=None) -> int:
    from helpers.core import launch, results

    ap = argparse.ArgumentParser(prog="python -m helpers ddpcomm", description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["buckets", "compression"])
    launch.add_args(ap, 2, timeout_s=180.0)
    ap.add_argument("--caps-mb", type=cli.bounded_float(0.0, 100_000.0, lo_open=True), nargs="+", default=[0.25, 1.0, 4.0, 25.0])
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.mode == "buckets":
        recs = bucket_sweep(a.world_size, a.caps_mb, a.backend, a.timeout)
    else:
        recs = compression(a.world_size, backend=a.backend, timeout_s=a.timeout)
    launch.emit(recs, f"ddp_{a.mode}", a)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
