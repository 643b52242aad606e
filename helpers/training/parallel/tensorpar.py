"""Tensor parallelism of the transformer MLP: Megatron's column-then-row split (chapter 07).

The MLP is Y = GELU(X A) B with A: h × 4h and B: 4h × h (``tiny.FeedForward``). Shoeybi et al.
(arXiv 1909.08053, §3) split A by *columns* (each rank computes GELU(X A_i) on its own — no communication,
because GELU is element-wise) and B by *rows* (each rank gets a partial sum X_i B_i that must be added up).
Two conjugate operators make that correct in forward *and* backward:

* ``f`` — identity in forward, all-reduce in backward (before the column-parallel layer: every rank's
  contribution to dL/dX must be summed);
* ``g`` — all-reduce in forward, identity in backward (after the row-parallel layer).

So one MLP costs one all-reduce of the activations (b·s·h elements) in forward and one in backward.
This module writes that by hand with ``torch.distributed`` (naive first), then does the same with DTensor's
``ColwiseParallel``/``RowwiseParallel`` where ``torch.distributed.tensor`` is available, and checks both
against the unsplit MLP: outputs, input gradients and weight gradients.

    python -m helpers tensorpar --world-size 2 --json
    torchrun --nproc_per_node=4 -m helpers tensorpar        # the same records: launch.run joins torchrun's group
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from helpers.core import cli, launch, results
from helpers.training.models import tiny


class _CopyToTP(torch.autograd.Function):
    """This is the ``f`` function in the paper (arXiv 1909.08053, Fig. 3): identity forward, all-reduce backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad)
        return grad


class _ReduceFromTP(torch.autograd.Function):
    """This is the ``g`` function in the paper: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def _shard(t: torch.Tensor, dim: int, rank: int, world_size: int) -> torch.Tensor:
    if t.shape[dim] % world_size:
        raise ValueError(f"dimension {dim} of size {t.shape[dim]} does not split over {world_size} ranks: "
                         "choose a hidden size divisible by the tensor-parallel size")
    return t.detach().chunk(world_size, dim=dim)[rank].clone()


class ColumnParallelLinear(nn.Module):
    """Y_i = X A_i: the rank's slice of output features. nn.Linear stores A as (out, in): split dim 0."""

    def __init__(self, full: nn.Linear, rank: int, world_size: int):
        super().__init__()
        self.weight = nn.Parameter(_shard(full.weight, 0, rank, world_size))
        self.bias = nn.Parameter(_shard(full.bias, 0, rank, world_size))

    def forward(self, x):                      # x: (..., h) replicated -> (..., 4h / t)
        return F.linear(_CopyToTP.apply(x), self.weight, self.bias)


class RowParallelLinear(nn.Module):
    """Y = Σ_i X_i B_i: the rank's slice of input features; the bias is added once, after the all-reduce."""

    def __init__(self, full: nn.Linear, rank: int, world_size: int):
        super().__init__()
        self.weight = nn.Parameter(_shard(full.weight, 1, rank, world_size))
        self.bias = nn.Parameter(full.bias.detach().clone())

    def forward(self, x):                      # x: (..., 4h / t) -> (..., h) replicated
        return _ReduceFromTP.apply(F.linear(x, self.weight)) + self.bias


class TensorParallelMLP(nn.Module):
    """The naive, hand-written Megatron MLP on this rank."""

    def __init__(self, full: tiny.FeedForward, rank: int, world_size: int):
        super().__init__()
        self.fc1 = ColumnParallelLinear(full.fc1, rank, world_size)
        self.fc2 = RowParallelLinear(full.fc2, rank, world_size)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


@dataclass(frozen=True)
class TPCheck:
    variant: str                # "naive" or "dtensor"
    rank: int
    world_size: int
    backend: str
    local_fc1_params: int       # parameters of the first layer this rank holds
    max_err_out: float          # |Y_tp − Y| over all elements
    max_err_grad_x: float       # |dL/dX_tp − dL/dX|
    max_err_grad_w1: float      # |dL/dA (gathered) − dL/dA|
    max_err_grad_w2: float      # |dL/dB (gathered) − dL/dB|
    allreduce_bytes_fwd: int    # bytes all-reduced per forward pass (g), the same again in backward (f)
    note: str = ""


def _gather(local: torch.Tensor, dim: int, world_size: int) -> torch.Tensor:
    parts = [torch.empty_like(local) for _ in range(world_size)]
    dist.all_gather(parts, local.contiguous())
    return torch.cat(parts, dim=dim)


def _reference(d_model: int, batch: int, seq: int, seed: int, device: str):
    """The unsplit MLP (seeded: identical on every rank), an input, and their output and gradients."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        full = tiny.FeedForward(d_model)
        x = torch.randn(batch, seq, d_model)                  # (B, T, h)
    full, x = full.to(device), x.to(device).requires_grad_()
    y = full(x)
    (y.square().sum()).backward()              # any scalar loss; this one makes every gradient non-trivial
    return full, x, y


def check(ctx: launch.RankContext, d_model: int = 32, batch: int = 4, seq: int = 8, seed: int = 0,
          variants: tuple[str, ...] = ("naive", "dtensor")) -> list[TPCheck]:
    """The rank worker: build the same MLP everywhere, split it, compare with the unsplit one on this rank."""
    if ctx.device == "cpu":
        torch.set_num_threads(1)   # tiny tensors: extra OpenMP threads only spin against the other ranks
    full, x_ref, y_ref = _reference(d_model, batch, seq, seed, ctx.device)
    act_bytes = y_ref.numel() * y_ref.element_size()
    out = []
    for variant in variants:
        x = x_ref.detach().clone().requires_grad_()
        if variant == "naive":
            tp = TensorParallelMLP(full, ctx.rank, ctx.world_size)
            y = tp(x)
            y.square().sum().backward()
            g1 = _gather(tp.fc1.weight.grad, 0, ctx.world_size)
            g2 = _gather(tp.fc2.weight.grad, 1, ctx.world_size)
            n1, note = tp.fc1.weight.numel() + tp.fc1.bias.numel(), ""
        elif variant == "dtensor":
            try:
                from torch.distributed.device_mesh import init_device_mesh
                from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                               parallelize_module)
            except ImportError as e:  # older torch: DTensor tensor parallelism is not there
                out.append(TPCheck(variant, ctx.rank, ctx.world_size, ctx.backend, 0, *[float("nan")] * 4, 0,
                                   note=f"skipped: torch.distributed.tensor.parallel unavailable ({e})"))
                continue
            mesh = init_device_mesh(torch.device(ctx.device).type, (ctx.world_size,))
            tp = tiny.FeedForward(d_model).to(ctx.device)
            tp.load_state_dict(full.state_dict())
            parallelize_module(tp, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
            y = tp(x)
            y.square().sum().backward()
            g1, g2 = tp.fc1.weight.grad.full_tensor(), tp.fc2.weight.grad.full_tensor()
            n1 = tp.fc1.weight.to_local().numel() + tp.fc1.bias.to_local().numel()
            note = "ColwiseParallel(fc1), RowwiseParallel(fc2)"
        else:
            raise ValueError(f"variant {variant!r}: use 'naive' or 'dtensor'")
        y = y.full_tensor() if hasattr(y, "full_tensor") else y
        err = lambda a, b: float((a.detach() - b.detach()).abs().max())  # noqa: E731
        out.append(TPCheck(variant, ctx.rank, ctx.world_size, ctx.backend, n1, err(y, y_ref),
                           err(x.grad, x_ref.grad), err(g1, full.fc1.weight.grad), err(g2, full.fc2.weight.grad),
                           act_bytes, note))
    return out


def run(world_size: int = 2, d_model: int = 32, batch: int = 4, seq: int = 8, seed: int = 0,
        variants=("naive", "dtensor"), timeout_s: float = 120) -> list[TPCheck]:
    """Run :func:`check` on ``world_size`` ranks (``launch.run``: spawned, or torchrun's) and return every rank's checks."""
    ws = launch.world_size(world_size)
    if d_model * 4 % ws:
        raise ValueError(f"4·d_model = {4 * d_model} does not split over {ws} ranks")
    res = launch.run(check, ws, d_model, batch, seq, seed, tuple(variants), timeout_s=timeout_s)
    return [c for per_rank in res.results for c in per_rank]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers tensorpar", description=__doc__.split("\n")[0])
    launch.add_args(ap, 2, backend=False)
    ap.add_argument("--d-model", type=cli.bounded_int(1, 65536), default=32)
    ap.add_argument("--batch", type=cli.bounded_int(1, 65536), default=4)
    ap.add_argument("--seq", type=cli.bounded_int(1, 65536), default=8)
    ap.add_argument("--variants", default="naive,dtensor")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = run(a.world_size, a.d_model, a.batch, a.seq, 0, tuple(a.variants.split(",")), a.timeout)
    launch.emit(recs, "tensorpar", a, columns=["variant", "rank", "world_size", "max_err_out", "max_err_grad_x",
                                               "max_err_grad_w1", "max_err_grad_w2", "allreduce_bytes_fwd"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
