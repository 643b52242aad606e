"""Data-parallel mini-runs: one process vs DDP vs FSDP (ZeRO-2 / ZeRO-3), with per-rank memory (chapter 06).

The same tiny model (``helpers.training.models.tiny``) is trained for a few Adam steps on the same *global* batch:

* ``single``        one process sees the whole batch (the reference);
* ``ddp``           ``DistributedDataParallel``: every rank keeps a full replica, gradients are all-reduced
                    (ZeRO stage 0: 16Ψ bytes per rank for fp32 Adam);
* ``fsdp-grad-op``  FSDP2 ``fully_shard(reshard_after_forward=False)`` = FSDP1's SHARD_GRAD_OP: parameters are
                    gathered for forward and kept until backward ends; gradients and Adam state stay sharded
                    (ZeRO stage 2);
* ``fsdp-full``     FSDP2 ``fully_shard(reshard_after_forward=True)`` = FULL_SHARD: parameters are re-sharded
                    after each module's forward and gathered again for backward (ZeRO stage 3).

Each rank takes its slice of the global batch, so the losses must equal the single-process ones up to float
rounding. Memory is *counted*, not sampled: the bytes of the tensors each rank holds locally (a DTensor counts
its local shard) — parameters between forward and backward, gradients after backward, Adam state after the
step — and set against ZeRO's formulas (arXiv 1910.02054, ``helpers.training.calc.memory.model_states``).

    python -m helpers dptrain --model mlp,gpt --world-size 2 --json          # spawns the ranks itself
    torchrun --nproc_per_node=2 -m helpers dptrain --model gpt               # the real launcher
    srun -N2 --ntasks-per-node=4 python -m helpers dptrain --model gpt       # Slurm (set MASTER_ADDR/PORT)
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, launch, results
from helpers.training.calc import memory
from helpers.training.models import tiny

MODES = ("single", "ddp", "fsdp-grad-op", "fsdp-full")
ZERO_STAGE = {"single": 0, "ddp": 0, "fsdp-grad-op": 2, "fsdp-full": 3}
BYTES_FP32_ADAM = memory.PRECISIONS["fp32-adam"]


@dataclass(frozen=True)
class RankRun:
    model: str
    mode: str
    rank: int
    world_size: int
    backend: str
    device: str
    n_params: int
    losses: tuple[float, ...]           # global-batch loss after each step's forward
    params_at_rest_bytes: int           # local parameter bytes between steps
    params_in_step_bytes: int           # local parameter bytes between forward and backward (the peak)
    grads_bytes: int                    # local gradient bytes after backward
    optim_bytes: int                    # local Adam state (exp_avg + exp_avg_sq) after the step
    zero_stage: int
    zero_formula_bytes: int             # ZeRO's per-rank model-state bytes for this stage (fp32 Adam)

    @property
    def measured_bytes(self) -> int:
        return self.params_in_step_bytes + self.grads_bytes + self.optim_bytes


def _local_bytes(t) -> int:
    """Bytes this rank holds for ``t``: a DTensor (FSDP2's sharded parameter) counts its local shard."""
    if t is None:
        return 0
    local = t.to_local() if hasattr(t, "to_local") else t
    return local.numel() * local.element_size()


def _wrap(model, mode: str, world_size: int, device: str):
    """Wrap ``model`` for ``mode``. FSDP shards every child module that holds parameters, then the root."""
    import torch

    if mode == "single":
        return model
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        # gradient_as_bucket_view: gradients *are* views of DDP's all-reduce buckets (no second copy).
        ids = [torch.device(device).index] if device.startswith("cuda") else None
        return DDP(model, device_ids=ids, gradient_as_bucket_view=True)
    if mode in ("fsdp-full", "fsdp-grad-op"):
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(torch.device(device).type, (world_size,))
        reshard = mode == "fsdp-full"
        units = model.layers if isinstance(model, tiny.TinyMLP) else [model.embed, *model.blocks, model.head]
        for unit in units:
            fully_shard(unit, mesh=mesh, reshard_after_forward=reshard)
        fully_shard(model, mesh=mesh, reshard_after_forward=reshard)
        return model
    raise ValueError(f"mode {mode!r}: use one of {MODES}")


def train(ctx: launch.RankContext | None, kind: str, mode: str, steps: int = 5, global_batch: int = 8,
          lr: float = 1e-2, seed: int = 0) -> RankRun:
    """Train ``kind`` for ``steps`` Adam steps under ``mode``; this rank's record. ``ctx=None`` = one process."""
    import torch
    import torch.distributed as dist

    rank, world, backend, device = (0, 1, "none", "cpu") if ctx is None else \
        (ctx.rank, ctx.world_size, ctx.backend, ctx.device)
    if mode == "single" and world != 1:
        raise ValueError(f"mode 'single' runs in one process, not on {world} ranks")
    if global_batch % world:
        raise ValueError(f"global_batch={global_batch} does not split evenly over {world} ranks: "
                         f"use a multiple of {world}")
    model = tiny.build(kind, seed).to(device)
    n_params = tiny.count_params(model)
    model = _wrap(model, mode, world, device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_of = tiny.loss_fn(kind)
    x, y = tiny.make_batch(kind, global_batch, seed + 1)
    n = global_batch // world
    x, y = x[rank * n:(rank + 1) * n].to(device), y[rank * n:(rank + 1) * n].to(device)  # this rank's slice
    losses, in_step = [], 0
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(model(x), y)
        in_step = max(in_step, sum(_local_bytes(p) for p in model.parameters()))
        loss.backward()
        opt.step()
        g = loss.detach().clone()
        if world > 1:                          # mean of equal-sized slices = the global-batch mean
            dist.all_reduce(g)
            g /= world
        losses.append(float(g))
    stage = ZERO_STAGE[mode]
    formula = memory.model_states(n_params, stage, world, "fp32-adam").total_bytes
    optim = sum(_local_bytes(v) for s in opt.state.values() for k, v in s.items() if k != "step")
    return RankRun(kind, mode, rank, world, backend, device, n_params, tuple(losses),
                   sum(_local_bytes(p) for p in model.parameters()), in_step,
                   sum(_local_bytes(p.grad) for p in model.parameters()), optim, stage, int(round(formula)))


def train_modes(ctx: launch.RankContext, kinds: tuple[str, ...], modes: tuple[str, ...], steps: int,
                global_batch: int, lr: float, seed: int) -> list[RankRun]:
    """The rank worker: every (kind, mode) in turn in one process group — one spawn, not one per run."""
    import torch

    if ctx.device == "cpu":
        torch.set_num_threads(1)   # tiny tensors: extra OpenMP threads only spin against the other ranks
    return [train(ctx, k, m, steps, global_batch, lr, seed) for k in kinds for m in modes]


def compare(kinds=("mlp",), world_size: int = 2, modes=("ddp", "fsdp-grad-op", "fsdp-full"), steps: int = 5,
            global_batch: int = 8, lr: float = 1e-2, seed: int = 0, timeout_s: float = 120) -> list[RankRun]:
    """The single-process reference (run here) followed by every (kind, mode) on ``world_size`` ranks
    (``launch.run``: spawned, or torchrun's — then the launcher's world size, and each rank runs the reference)."""
    bad = [m for m in modes if m not in MODES[1:]]
    if bad:
        raise ValueError(f"modes {bad}: distributed modes are {MODES[1:]}")
    world_size = launch.world_size(world_size)
    if global_batch % world_size:
        raise ValueError(f"global_batch={global_batch} does not split evenly over {world_size} ranks: "
                         f"use a multiple of {world_size}")
    backend, _ = launch.choose_backend(world_size)
    ref_ctx = None
    if backend == "nccl":       # run the reference on the same kind of device as the ranks
        ref_ctx = launch.RankContext(0, 1, 0, "none", "cuda:0")
    out = [train(ref_ctx, k, "single", steps, global_batch, lr, seed) for k in kinds]
    res = launch.run(train_modes, world_size, tuple(kinds), tuple(modes), steps, global_batch, lr, seed,
                     timeout_s=timeout_s)
    return out + [r for per_rank in res.results for r in per_rank]


def max_loss_diff(runs: list[RankRun]) -> dict[tuple[str, str], float]:
    """Largest |loss − single-process loss| over steps and ranks, per (model, mode); NaN without a reference."""
    ref = {r.model: r.losses for r in runs if r.mode == "single"}
    diffs: dict[tuple[str, str], float] = {}
    for r in runs:
        if r.model not in ref:               # e.g. runs of one rank, without the reference
            diffs[(r.model, r.mode)] = float("nan")
            continue
        d = max(abs(a - b) for a, b in zip(r.losses, ref[r.model]))
        diffs[(r.model, r.mode)] = max(diffs.get((r.model, r.mode), 0.0), d)
    return diffs


def records(runs: list[RankRun]) -> list[dict]:
    """Flat rows for tables and JSON: the losses as first/last, memory in bytes, the loss gap."""
    diff = max_loss_diff(runs)
    return [{"model": r.model, "mode": r.mode, "rank": r.rank, "world_size": r.world_size, "backend": r.backend,
             "device": r.device, "n_params": r.n_params, "loss_first": r.losses[0], "loss_last": r.losses[-1],
             "max_loss_diff": diff[(r.model, r.mode)], "zero_stage": r.zero_stage,
             "params_in_step_bytes": r.params_in_step_bytes, "params_at_rest_bytes": r.params_at_rest_bytes,
             "grads_bytes": r.grads_bytes, "optim_bytes": r.optim_bytes, "measured_bytes": r.measured_bytes,
             "zero_formula_bytes": r.zero_formula_bytes, "losses": list(r.losses)} for r in runs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers dptrain", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="mlp,gpt", help="comma-separated kinds from %s" % (tiny.KINDS,))
    launch.add_args(ap, 2, many=True, backend=False, timeout_s=180.0)
    ap.add_argument("--modes", default="ddp,fsdp-grad-op,fsdp-full")
    cli.add_training_args(ap, steps=5, max_steps=100_000)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    rows = []
    for ws in launch.world_sizes(a.world_size):     # under torchrun/srun: the launcher's size, once
        rows += records(compare(tuple(a.model.split(",")), ws, tuple(a.modes.split(",")), a.steps,
                                a.global_batch, a.lr, a.seed, a.timeout))
    launch.emit(rows, "dptrain", a, columns=["model", "mode", "rank", "world_size", "backend", "max_loss_diff",
                                             "measured_bytes", "zero_formula_bytes"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
