"""DeepSpeed ZeRO stages 0-3, run for real on Gloo (CPU) or NCCL (GPU) ranks, bytes measured (chapter 06).

The job is chapter 06's Lab 1: TinyGPT, a few Adam steps (``torch.optim.Adam`` handed to DeepSpeed as a client
optimizer, so no compiled op is needed), global batch split evenly over the ranks, one seed. Each stage runs
under ``deepspeed.initialize`` with ``"zero_optimization": {"stage": N}``.

Memory is *measured*: :func:`census` walks the tensors the engine really holds — the model's parameters
(``p.data``, and ``p.ds_tensor``, the stage-3 shard), their ``.grad``, and every tensor reachable from the ZeRO
optimizer object (flat partitions, fp32 master partitions, gradient partitions, buckets, the wrapped Adam's
``state``) — and adds up *storage* bytes, each storage once (DeepSpeed's parameters are views into flat
buffers). It runs at every module's forward, at every gradient's arrival and after every step; the largest
value seen per category is kept. What was found is set against ZeRO's formula (fp32 Adam,
``helpers.training.calc.memory``) and, in the chapter, against FSDP's counts from ``dptrain``.

    python -m helpers dszero --world-size 2 --stages 0,1,2,3 --json       # spawns 2 ranks (Gloo on CPU)
    python -m helpers dszero --world-size 1,2 --out dszero.json            # 1 GPU: NCCL rank, then 2 Gloo ranks
    torchrun --nproc_per_node=2 -m helpers dszero --stages 3              # the real launcher
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from dataclasses import dataclass

from helpers.core import cli, launch, results
from helpers.training.calc import memory
from helpers.training.models import tiny

STAGES = (0, 1, 2, 3)
CATEGORIES = ("params", "grads", "master", "moments", "buffers")
# Where DeepSpeed keeps what (attribute names from deepspeed/runtime/zero/stage_1_and_2.py and stage3.py),
# checked in this order; the first match names a storage's category.
_RULES = (("moments", ("exp_avg", "state[")),
          ("master", ("single_partition_of_fp32_groups", "fp32_partitioned_groups_flat", "param_groups")),
          ("grads", ("param.grad", "averaged_gradients", "grad_partitions_flat_buffer", "grads_in_partition",
                     ".grad")),
          ("params", ("param.data", "param.ds_tensor", "bit16_groups_flat", "fp16_partitioned_groups_flat")))


@dataclass(frozen=True)
class ZeroRankRun:
    stage: int
    rank: int
    world_size: int
    backend: str
    device: str
    deepspeed_version: str
    optimizer_class: str                # the object DeepSpeed built around the client Adam
    n_params: int
    losses: tuple[float, ...]           # global-batch loss after each step's forward
    params_bytes: int                   # peak of each category over the run, measured by census()
    grads_bytes: int
    master_bytes: int                   # fp32 master copy of the weights (ZeRO's optimizer state includes it)
    moments_bytes: int                  # Adam's exp_avg, exp_avg_sq, step
    buffers_bytes: int                  # everything else: reduce buckets, norms, flags
    peak_total_bytes: int               # the largest single census (all categories at one instant)
    at_rest_bytes: int                  # the census after the last step
    zero_formula_bytes: int             # ZeRO, fp32 Adam, no master copy (memory.model_states "fp32-adam")
    zero_formula_master_bytes: int      # the same plus DeepSpeed's fp32 master partition, 4Ψ/N_d for stages 1-3
    at_rest_where: tuple[tuple[str, str, int], ...] = ()   # (path, category, bytes) after the last step

    @property
    def measured_bytes(self) -> int:
        return self.params_bytes + self.grads_bytes + self.master_bytes + self.moments_bytes


def _category(path: str) -> str:
    for cat, keys in _RULES:
        if any(k in path for k in keys):
            return cat
    return "buffers"


def census(engine, by_path: bool = False) -> dict[str, int]:
    """Bytes held right now, per category: every storage reachable from the engine's model and ZeRO
    optimizer, counted once (keyed by its address), named by the first path that reached it.
    ``by_path=True``: bytes per path instead (list indices and tensor keys dropped), e.g.
    ``optimizer.fp32_partitioned_groups_flat``."""
    import torch

    seen: dict[int, tuple[str, int]] = {}
    visited: set[int] = set()

    def add(path, t):
        if isinstance(t, torch.Tensor) and t.device.type != "meta" and t.untyped_storage().nbytes() > 0:
            seen.setdefault(t.untyped_storage().data_ptr(), (path, t.untyped_storage().nbytes()))

    def walk(obj, path, depth):
        if depth > 5 or id(obj) in visited:
            return
        visited.add(id(obj))
        if isinstance(obj, torch.Tensor):
            add(path, obj)
            add(path + ".grad", obj.grad)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{path}[{'T' if isinstance(k, torch.Tensor) else k}]", depth + 1)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                walk(v, f"{path}[{i}]", depth + 1)
        elif type(obj).__module__.startswith(("deepspeed.runtime", "torch.optim")):
            # DeepSpeed's own objects and the wrapped torch optimizer; that one last, so that a partition
            # is named by DeepSpeed's attribute rather than by the torch optimizer's param_groups
            for k, v in sorted(vars(obj).items(), key=lambda kv: kv[0] == "optimizer"):
                if k != "module":
                    walk(v, f"{path}.{k}", depth + 1)

    for p in engine.module.parameters():
        add("param.data", p.data)
        add("param.ds_tensor", getattr(p, "ds_tensor", None))      # stage 3: this rank's shard
        add("param.grad", p.grad)
    walk(engine.optimizer, "optimizer", 0)
    out = {} if by_path else dict.fromkeys(CATEGORIES, 0)
    for path, nbytes in seen.values():
        key = re.sub(r"\[(\d+|T)\]", "", path) if by_path else _category(path)
        out[key] = out.get(key, 0) + nbytes
    return out


class _Peaks:
    """Runs :func:`census` at every module's forward, every gradient's arrival and on demand; keeps maxima."""

    def __init__(self, engine):
        self.engine, self.peak, self.peak_total, self.handles = engine, dict.fromkeys(CATEGORIES, 0), 0, []
        for m in engine.module.modules():        # registered after DeepSpeed's own hooks, so they see its work
            self.handles.append(m.register_forward_pre_hook(self._hook))
        for p in engine.module.parameters():
            self.handles.append(p.register_post_accumulate_grad_hook(self._hook))

    def _hook(self, *_):
        self.sample()                             # returns None: a forward pre-hook's result would replace the input

    def sample(self) -> dict[str, int]:
        now = census(self.engine)
        self.peak = {c: max(self.peak[c], now[c]) for c in CATEGORIES}
        self.peak_total = max(self.peak_total, sum(now.values()))
        return now

    def remove(self):
        for h in self.handles:
            h.remove()


def ds_config(stage: int, world_size: int, global_batch: int = 8, bucket_elems: int = 4096,
              zero_overrides: dict | None = None) -> dict:
    """The DeepSpeed JSON for Lab 1's job: fp32, no accumulation, small buckets, nothing kept whole;
    ``zero_overrides`` is merged into ``zero_optimization`` last (e.g. to restore a DeepSpeed default)."""
    if stage not in STAGES:
        raise ValueError(f"stage={stage}: ZeRO stages are {STAGES}")
    if world_size < 1 or global_batch % world_size:
        raise ValueError(f"global_batch={global_batch} does not split evenly over {world_size} ranks: "
                         f"use a multiple of {world_size}")
    zero = {"stage": stage, "reduce_bucket_size": bucket_elems, "allgather_bucket_size": bucket_elems}
    if stage == 3:   # the defaults keep small or soon-reused parameters whole: TinyGPT would not be sharded
        zero.update(stage3_param_persistence_threshold=0, stage3_max_live_parameters=0,
                    stage3_max_reuse_distance=0, stage3_prefetch_bucket_size=0)
    zero.update(zero_overrides or {})
    return {"train_batch_size": global_batch, "train_micro_batch_size_per_gpu": global_batch // world_size,
            "gradient_accumulation_steps": 1, "zero_optimization": zero,
            "zero_allow_untested_optimizer": True,     # a torch.optim.Adam client optimizer under ZeRO
            "zero_force_ds_cpu_optimizer": False,      # do not demand DeepSpeed's compiled CPU Adam
            "steps_per_print": 10**9, "wall_clock_breakdown": False}


def formula_bytes(n_params: int, stage: int, world_size: int) -> tuple[int, int]:
    """(ZeRO fp32-Adam formula, the same + DeepSpeed's fp32 master partition) in bytes per rank."""
    plain = memory.model_states(n_params, stage, world_size, "fp32-adam").total_bytes
    master = 4 * n_params / world_size if stage > 0 else 0.0
    return int(round(plain)), int(round(plain + master))


def train(ctx: launch.RankContext, stage: int, steps: int = 3, global_batch: int = 8, lr: float = 1e-2,
          seed: int = 0, kind: str = "gpt", zero_overrides: dict | None = None) -> ZeroRankRun:
    """Train ``kind`` under ZeRO ``stage`` on this rank; losses and measured bytes. Needs a process group."""
    os.environ.setdefault("DS_ACCELERATOR", "cuda" if ctx.device.startswith("cuda") else "cpu")
    import logging

    import deepspeed
    import torch
    import torch.distributed as dist

    deepspeed.utils.logger.setLevel(logging.WARNING)
    if ctx.device == "cpu":
        # DeepSpeed's TorchBackend JIT-compiles a shared-memory all-reduce (deepspeed_shm_comm, C++ via ninja,
        # ~30 s on 2 cores the first time) when it starts; only inference_all_reduce uses it, training does not.
        importlib.import_module("deepspeed.comm.torch").build_shm_op = lambda: None
    deepspeed.init_distributed(dist_backend=ctx.backend)     # joins the launcher's existing process group
    cfg = ds_config(stage, ctx.world_size, global_batch, zero_overrides=zero_overrides)
    model = tiny.build(kind, seed)
    n_params = tiny.count_params(model)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=torch.optim.Adam(model.parameters(), lr=lr),
                                           config=cfg)
    x, y = tiny.make_batch(kind, global_batch, seed + 1)
    n = global_batch // ctx.world_size
    x, y = x[ctx.rank * n:(ctx.rank + 1) * n].to(engine.device), y[ctx.rank * n:(ctx.rank + 1) * n].to(engine.device)
    loss_of, losses, peaks = tiny.loss_fn(kind), [], _Peaks(engine)
    try:
        for _ in range(steps):
            loss = loss_of(engine(x), y)
            engine.backward(loss)
            peaks.sample()
            engine.step()
            peaks.sample()
            g = loss.detach().clone()
            dist.all_reduce(g)
            losses.append(float(g) / ctx.world_size)
        rest = peaks.sample()
        where = tuple((k, _category(k), v) for k, v in sorted(census(engine, by_path=True).items()))
    finally:
        peaks.remove()
        engine.destroy()
    plain, with_master = formula_bytes(n_params, stage, ctx.world_size)
    p = peaks.peak
    return ZeroRankRun(stage, ctx.rank, ctx.world_size, ctx.backend, ctx.device, deepspeed.__version__,
                       type(engine.optimizer).__name__, n_params, tuple(losses), p["params"], p["grads"],
                       p["master"], p["moments"], p["buffers"], peaks.peak_total, sum(rest.values()),
                       plain, with_master, where)


def train_stages(ctx: launch.RankContext, stages: tuple[int, ...], steps: int, global_batch: int, lr: float,
                 seed: int, zero_overrides: dict | None = None) -> list[ZeroRankRun]:
    """The rank worker: every stage in turn in one process group (one spawn, one DeepSpeed import)."""
    import torch

    if ctx.device == "cpu":
        torch.set_num_threads(1)     # tiny tensors: more OpenMP threads only spin against the other rank
    return [train(ctx, s, steps, global_batch, lr, seed, zero_overrides=zero_overrides) for s in stages]


def compare(stages=STAGES, world_size: int = 2, steps: int = 3, global_batch: int = 8, lr: float = 1e-2,
            seed: int = 0, timeout_s: float = 120, zero_overrides: dict | None = None) -> list[ZeroRankRun]:
    """Run ``stages`` on ``world_size`` ranks (``launch.run``: spawned, or torchrun's); every rank's record."""
    bad = [s for s in stages if s not in STAGES]
    if bad or not stages:
        raise ValueError(f"stages {list(stages)}: choose among {STAGES}")
    world_size = launch.world_size(world_size)
    for s in stages:
        ds_config(s, world_size, global_batch, zero_overrides=zero_overrides)   # bad input: refused here
    if importlib.util.find_spec("deepspeed") is None:   # found, not imported: its import logs to stdout
        raise RuntimeError("deepspeed is not installed: pip install deepspeed==0.19.8 (no CUDA toolchain needed)")
    res = launch.run(train_stages, world_size, tuple(stages), steps, global_batch, lr, seed,
                     dict(zero_overrides or {}), timeout_s=timeout_s)
    return [r for per_rank in res.results for r in per_rank]


def loss_gap(runs: list[ZeroRankRun], reference: tuple[float, ...] | None = None) -> float:
    """Largest |loss − reference| over stages, ranks and steps; the reference defaults to stage 0's rank 0."""
    if reference is None:
        reference = min(runs, key=lambda r: (r.stage, r.rank)).losses
    return max(abs(a - b) for r in runs for a, b in zip(r.losses, reference, strict=True))


def records(runs: list[ZeroRankRun]) -> list[dict]:
    """Flat rows for tables and JSON, with the measured total and both formulas."""
    keys = ("stage", "rank", "world_size", "backend", "device", "deepspeed_version", "optimizer_class",
            "n_params", "params_bytes", "grads_bytes", "master_bytes", "moments_bytes", "buffers_bytes",
            "peak_total_bytes", "at_rest_bytes", "zero_formula_bytes", "zero_formula_master_bytes")
    gap = loss_gap(runs) if runs else float("nan")
    return [{**{k: getattr(r, k) for k in keys}, "measured_bytes": r.measured_bytes, "losses": list(r.losses),
             "max_loss_diff_vs_stage0": gap} for r in runs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers dszero", description=__doc__.split("\n")[0])
    ap.add_argument("--stages", type=cli.csv_of(cli.bounded_int(0, 3)), default="0,1,2,3",
                    help="comma-separated ZeRO stages, e.g. 0,1,2,3")
    launch.add_args(ap, 2, many=True, backend=False, timeout_s=180.0)
    cli.add_training_args(ap, steps=3, max_steps=1000)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    rows = []
    for ws in launch.world_sizes(a.world_size):   # one start per world size; the loss gap is taken within each
        rows += records(compare(tuple(a.stages), ws, a.steps, a.global_batch, a.lr, a.seed, a.timeout))
    launch.emit(rows, "dszero", a, columns=["world_size", "stage", "rank", "backend", "measured_bytes",
                                            "zero_formula_bytes", "zero_formula_master_bytes",
                                            "peak_total_bytes", "max_loss_diff_vs_stage0"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
