"""Sequence parallelism (Korthikanti et al., arXiv 2205.05198, §4.2.2) on the transformer MLP block (chapter 07).

Tensor parallelism (``tensorpar``) splits the MLP's matrices, but the LayerNorm before it and the dropout after it
still run on the full activation, replicated on every rank. Sequence parallelism splits those regions along the
sequence: activations are kept as (s/t, b, h) per rank, in Megatron's sequence-first layout. Two conjugate
operators replace ``f`` and ``g`` of tensor parallelism:

* ``g`` — all-gather along the sequence in forward (before the column-parallel layer, which needs the whole
  sequence), reduce-scatter of the gradient in backward;
* ``ḡ`` — reduce-scatter along the sequence in forward (after the row-parallel layer: sum the partial sums and
  keep one's own slice of the sequence), all-gather of the gradient in backward.

A ring all-reduce *is* a reduce-scatter plus an all-gather, so the bytes moved are the same as tensor parallelism's;
the gain is memory: LayerNorm and dropout save 1/t of what they saved before. This module runs the block

    y = x + dropout(MLP(LayerNorm(x)))

three ways on every rank — unsplit (the reference), tensor-parallel only, tensor + sequence parallel — checks that
outputs and every gradient match, and measures the bytes each region saves for backward with
``torch.autograd.graph.saved_tensors_hooks`` (the tensors autograd really keeps, counted once per storage).

    python -m helpers seqpar --world-size 2 --json                       # spawns 2 ranks (gloo on CPU)
    torchrun --nproc_per_node=2 -m helpers seqpar --json                 # the same records under the real launcher
"""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from helpers.core import cli, launch, results
from helpers.training.models import tiny
from helpers.training.parallel import tensorpar


class _GatherFromSP(torch.autograd.Function):
    """``g``: all-gather along the sequence (dim 0) forward, reduce-scatter of the gradient backward."""

    @staticmethod
    def forward(ctx, x):
        out = x.new_empty((x.shape[0] * dist.get_world_size(), *x.shape[1:]))
        dist.all_gather_into_tensor(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_empty((grad.shape[0] // dist.get_world_size(), *grad.shape[1:]))
        dist.reduce_scatter_tensor(out, grad.contiguous())
        return out


class _ReduceScatterToSP(torch.autograd.Function):
    """``ḡ``: reduce-scatter along the sequence forward, all-gather of the gradient backward."""

    @staticmethod
    def forward(ctx, x):
        out = x.new_empty((x.shape[0] // dist.get_world_size(), *x.shape[1:]))
        dist.reduce_scatter_tensor(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_empty((grad.shape[0] * dist.get_world_size(), *grad.shape[1:]))
        dist.all_gather_into_tensor(out, grad.contiguous())
        return out


class _Meter:
    """Bytes autograd saves for backward, per region; a storage saved twice is counted once, parameters never."""

    def __init__(self, params=()):
        self.region, self.bytes = "other", {}
        self._seen = {(p.untyped_storage().data_ptr(), p.untyped_storage().nbytes()) for p in params}

    @contextmanager
    def __call__(self, region: str):
        prev, self.region = self.region, region
        try:
            yield
        finally:
            self.region = prev

    def pack(self, t: torch.Tensor):
        key = (t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())
        if key not in self._seen:
            self._seen.add(key)
            self.bytes[self.region] = self.bytes.get(self.region, 0) + key[1]
        return t


def _dropout_mask(shape, p: float, seed: int) -> torch.Tensor:
    """The full sequence's dropout mask, the same on every rank; a sequence-parallel rank uses its slice."""
    g = torch.Generator().manual_seed(seed + 1)
    return (torch.rand(shape, generator=g) >= p).float() / (1 - p)


def sp_block(x_local, ln: nn.LayerNorm, mlp: tensorpar.TensorParallelMLP, mask_local, meter: _Meter):
    """One rank's y = x + dropout(MLP(LN(x))) with x split along the sequence: (s/t, b, h) in and out."""
    with meter("layernorm+dropout"):
        u = ln(x_local)                                        # (s/t, b, h): LayerNorm on this rank's tokens
    with meter("tensor-parallel MLP"):
        u = _GatherFromSP.apply(u)                             # g: all-gather -> (s, b, h)
        z = F.gelu(F.linear(u, mlp.fc1.weight, mlp.fc1.bias))  # column-parallel: (s, b, 4h/t)
        z = _ReduceScatterToSP.apply(F.linear(z, mlp.fc2.weight))  # row-parallel, ḡ: reduce-scatter -> (s/t, b, h)
    with meter("layernorm+dropout"):
        return x_local + (z + mlp.fc2.bias) * mask_local       # bias, dropout and residual on s/t tokens


def tp_block(x, ln: nn.LayerNorm, mlp: tensorpar.TensorParallelMLP, mask, meter: _Meter):
    """Tensor parallelism alone: LayerNorm and dropout on the full (s, b, h) activation, replicated."""
    with meter("layernorm+dropout"):
        u = ln(x)
    with meter("tensor-parallel MLP"):
        z = mlp(u)                                             # f ... g: one all-reduce each way
    with meter("layernorm+dropout"):
        return x + z * mask


@dataclass(frozen=True)
class SPCheck:
    variant: str                 # "reference", "tp" or "tp+sp"
    rank: int
    world_size: int
    backend: str
    local_seq: int               # tokens of the sequence this rank's LayerNorm/dropout see
    ln_dropout_saved_bytes: int  # bytes saved for backward by LayerNorm, dropout and residual on this rank
    mlp_saved_bytes: int         # bytes saved for backward inside the tensor-parallel MLP on this rank
    max_err_out: float           # |y − y_ref| over the whole (gathered) output
    max_err_grad_x: float        # |dL/dx − dL/dx_ref|
    max_err_grad_params: float   # largest |dL/dθ − dL/dθ_ref| over LayerNorm and both linear layers (gathered)
    collectives_fwd: str         # what one forward pass communicates


def check(ctx: launch.RankContext, seq: int = 8, batch: int = 2, d_model: int = 16, p_drop: float = 0.1,
          seed: int = 0) -> list[SPCheck]:
    """The rank worker: the block unsplit, with TP, and with TP+SP; outputs, gradients and saved bytes."""
    torch.set_num_threads(1)   # tiny tensors: extra OpenMP threads only spin against the other ranks
    t, r = ctx.world_size, ctx.rank
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        ln, full = nn.LayerNorm(d_model), tiny.FeedForward(d_model)
        with torch.no_grad():
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.5, 0.5)
        x_ref = torch.randn(seq, batch, d_model)                # (s, b, h), sequence first as in Megatron
    mask = _dropout_mask(x_ref.shape, p_drop, seed)
    params = lambda m1, m2: [m1.weight, m1.bias, m2.fc1.weight, m2.fc1.bias, m2.fc2.weight, m2.fc2.bias]  # noqa: E731
    out = []
    for variant in ("reference", "tp", "tp+sp"):
        ln_v = nn.LayerNorm(d_model)
        ln_v.load_state_dict(ln.state_dict())
        x = x_ref.clone().requires_grad_()
        if variant == "reference":
            mlp = tiny.FeedForward(d_model)
            mlp.load_state_dict(full.state_dict())
        else:
            mlp = tensorpar.TensorParallelMLP(full, r, t)
        meter = _Meter(params(ln_v, mlp))                      # weights are not activations
        with torch.autograd.graph.saved_tensors_hooks(meter.pack, lambda t_: t_):
            if variant == "reference":
                with meter("layernorm+dropout"):
                    u = ln_v(x)
                with meter("tensor-parallel MLP"):
                    z = mlp(u)
                with meter("layernorm+dropout"):
                    y = x + z * mask
                comm, local_seq = "none", seq
            elif variant == "tp":
                y, comm, local_seq = tp_block(x, ln_v, mlp, mask, meter), "all-reduce (s, b, h)", seq
            else:
                if seq % t:
                    raise ValueError(f"seq={seq} does not split over {t} ranks: choose a multiple of the TP size")
                x = x_ref.chunk(t, dim=0)[r].clone().requires_grad_()   # this rank's own s/t tokens
                y = sp_block(x, ln_v, mlp, mask.chunk(t, dim=0)[r].clone(), meter)
                comm, local_seq = "all-gather (s, b, h) + reduce-scatter (s, b, h)", seq // t
        y.square().sum().backward()
        if variant == "tp+sp":
            y = tensorpar._gather(y.detach(), 0, t)            # the whole output, for the comparison
            g_x = tensorpar._gather(x.grad, 0, t)               # each rank holds dL/dx of its own tokens
            for p in (*ln_v.parameters(), mlp.fc2.bias):        # these saw only s/t tokens: sum over ranks,
                dist.all_reduce(p.grad)                         # as Megatron does for sequence-parallel params
        else:
            g_x = x.grad
        if variant == "reference":
            y_ref, gx_ref, gp_ref = y.detach(), g_x.clone(), [p.grad.clone() for p in params(ln_v, mlp)]
            errs = (0.0, 0.0, 0.0)
        else:
            gp = [p.grad for p in params(ln_v, mlp)]
            gp[2], gp[3] = tensorpar._gather(gp[2], 0, t), tensorpar._gather(gp[3], 0, t)
            gp[4] = tensorpar._gather(gp[4], 1, t)
            err = lambda a, b: float((a.detach() - b).abs().max())  # noqa: E731
            errs = (err(y, y_ref), err(g_x, gx_ref), max(err(a, b) for a, b in zip(gp, gp_ref)))
        out.append(SPCheck(variant, r, t, ctx.backend, local_seq, meter.bytes.get("layernorm+dropout", 0),
                           meter.bytes.get("tensor-parallel MLP", 0), *errs, comm))
    return out


def run(world_size: int = 2, seq: int = 8, batch: int = 2, d_model: int = 16, p_drop: float = 0.1,
        seed: int = 0, timeout_s: float = 60) -> list[SPCheck]:
    """Run :func:`check` on ``world_size`` ranks (``launch.run``: spawned, or torchrun's; gloo, the block runs on CPU)
    and return every rank's checks."""
    ws = launch.world_size(world_size)
    if seq % ws or 4 * d_model % ws:
        raise ValueError(f"seq={seq} and 4·d_model={4 * d_model} must both split over {ws} ranks: "
                         "choose multiples of the tensor-parallel size")
    if not 0 <= p_drop < 1:
        raise ValueError(f"p_drop={p_drop}: a dropout probability is in [0, 1)")
    res = launch.run(check, ws, seq, batch, d_model, p_drop, seed, backend="gloo", timeout_s=timeout_s)
    return [c for per_rank in res.results for c in per_rank]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers seqpar", description=__doc__.split("\n")[0])
    launch.add_args(ap, 2, backend=False, timeout_s=60.0)            # the tensor/sequence-parallel ranks
    ap.add_argument("--seq", type=cli.bounded_int(1, 65536), default=8)
    ap.add_argument("--batch", type=cli.bounded_int(1, 4096), default=2)
    ap.add_argument("--d-model", type=cli.bounded_int(1, 16384), default=16)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = run(a.world_size, a.seq, a.batch, a.d_model, timeout_s=a.timeout)
    launch.emit(recs, "seqpar", a, columns=["variant", "rank", "local_seq", "ln_dropout_saved_bytes",
                                            "mlp_saved_bytes", "max_err_out", "max_err_grad_x",
                                            "max_err_grad_params"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
