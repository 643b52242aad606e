"""A real 2-D ``DeviceMesh``: data × tensor parallelism on 4 ranks, its coordinates, groups and collectives (chapter 07).

``torch.distributed.device_mesh.init_device_mesh(device_type, (dp, tp), mesh_dim_names=("dp", "tp"))`` lays the
world's ranks out as a dp × tp array (row-major: the last dimension, tp, varies fastest, so a tensor-parallel group
is made of consecutive ranks — the GPUs of one node when ranks are numbered node by node) and creates one process
group per row and per column. Every rank calls it; each then reads its own coordinate and the ranks of its two
groups, and runs an all-reduce in each group. The expected sums follow from the layout alone, so the check is
exact: an all-reduce of ``rank`` over the tp group gives the sum of that group's ranks, over the dp group the sum
of the other one's. The same layout is computed without any process by ``planner.rank_grid`` and compared.

    python -m helpers mesh --dp 2 --tp 2 --json                          # spawns dp·tp = 4 ranks (gloo on CPU)
    torchrun --nproc_per_node=4 -m helpers mesh --dp 2 --tp 2 --json     # the same records under the real launcher
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist

from helpers.core import cli, launch, procs, results


@dataclass(frozen=True)
class MeshRank:
    rank: int
    world_size: int
    backend: str
    mesh_shape: tuple            # (dp, tp)
    coordinate: tuple            # (dp_index, tp_index) of this rank in the mesh
    tp_group: tuple              # global ranks of this rank's tensor-parallel group (a row of the mesh)
    dp_group: tuple              # global ranks of this rank's data-parallel group (a column)
    tp_allreduce: float          # all-reduce (sum) of this rank's id over mesh["tp"]
    dp_allreduce: float          # all-reduce (sum) of this rank's id over mesh["dp"]
    tp_expected: float           # sum(tp_group), from the layout alone
    dp_expected: float           # sum(dp_group)
    dtensor_sum: float           # a DTensor sharded over tp and replicated over dp, reduced with .full_tensor()


def mesh_worker(ctx: launch.RankContext, dp: int = 2, tp: int = 2) -> MeshRank:
    """The rank worker: build the dp × tp mesh, read coordinate and groups, all-reduce along each dimension."""
    torch.set_num_threads(1)
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh(torch.device(ctx.device).type, (dp, tp), mesh_dim_names=("dp", "tp"))
    coord = tuple(int(c) for c in mesh.get_coordinate())
    groups = {d: tuple(dist.get_process_group_ranks(mesh.get_group(d))) for d in ("dp", "tp")}
    sums = {}
    for d in ("dp", "tp"):
        v = torch.tensor([float(ctx.rank)], device=ctx.device)
        dist.all_reduce(v, group=mesh.get_group(d))           # only the ranks of this row / column take part
        sums[d] = float(v.item())
    dt_sum = float("nan")
    try:
        from torch.distributed.tensor import Replicate, Shard, distribute_tensor

        # a (tp, 2) tensor split by rows over tp and copied over dp; .full_tensor() gathers it back
        x = distribute_tensor(torch.arange(tp * 2, dtype=torch.float32, device=ctx.device).reshape(tp, 2),
                              mesh, [Replicate(), Shard(0)])
        assert x.to_local().shape == (1, 2)                   # each rank holds one row: 1/tp of the tensor
        dt_sum = float(x.full_tensor().sum())
    except ImportError:                                        # older torch without torch.distributed.tensor
        pass
    return MeshRank(ctx.rank, ctx.world_size, ctx.backend, (dp, tp), coord, groups["tp"], groups["dp"],
                    sums["tp"], sums["dp"], float(sum(groups["tp"])), float(sum(groups["dp"])), dt_sum)


def run(dp: int = 2, tp: int = 2, timeout_s: float = 60, backend: str | None = None) -> list[MeshRank]:
    """dp·tp ranks (``launch.run``: spawned, gloo on CPU, or torchrun's) build the mesh; every rank's view of it."""
    if dp < 1 or tp < 1:
        raise ValueError(f"dp={dp}, tp={tp}: both mesh dimensions need at least 1 rank")
    ws = launch.world_size(dp * tp)
    if ws != dp * tp:
        raise ValueError(f"the launcher started {ws} ranks but a {dp} × {tp} mesh needs dp·tp = {dp * tp}: "
                         f"run torchrun --nproc_per_node={dp * tp}, or give --dp and --tp whose product is {ws}")
    if launch.env_rank() is None:             # spawned here: no more ranks than this machine runs in time
        procs.check_local_ranks(dp * tp, f"give --dp and --tp whose product is at most "
                                         f"{procs.local_rank_limit()[0]}, or run the mesh under torchrun")
    return list(launch.run(mesh_worker, dp * tp, dp, tp, backend=backend, timeout_s=timeout_s).results)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers mesh", description=__doc__.split("\n")[0])
    ap.add_argument("--dp", type=cli.bounded_int(1, 16), default=2)
    ap.add_argument("--tp", type=cli.bounded_int(1, 16), default=2)
    launch.add_args(ap, None, timeout_s=60.0)                  # the world size is dp·tp
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = run(a.dp, a.tp, a.timeout, a.backend)
    launch.emit(recs, "mesh", a, columns=["rank", "coordinate", "tp_group", "dp_group", "tp_allreduce",
                                          "tp_expected", "dp_allreduce", "dp_expected"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
