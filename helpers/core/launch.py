"""Start N ranks of a distributed job, from a notebook or from the real launchers (chapters 03, 06-08).

One launcher, :func:`run`: a lab names its worker function and its world size,

    res = launch.run(worker, 2, *args)      # res.results: one result per rank, in rank order

and every rank calls ``worker(ctx, *args)`` with a :class:`RankContext` (rank, world size, backend, device).

* From a notebook or a plain ``python -m helpers TOOL``: ``world_size`` local processes are spawned
  (``helpers.core.rankspawn``: timeout, heartbeats, per-rank logs, every child stopped, :class:`RankFailed`
  naming the rank that raised, died or hung).
* Under ``torchrun`` or Slurm's ``srun`` (their variables are set): this process *is* one rank
  (``helpers.core.rankenv``): it joins the group, runs the worker, gathers every rank's result to all ranks and
  leaves — so the same CLI returns the same records both ways. The world size is the launcher's.

On the CLI side :func:`add_args` adds the shared options (``--world-size``, ``--backend``, ``--timeout``) and
:func:`emit` prints the record on rank 0 only. :func:`torchrun` starts the real launcher from Python. The backend
is chosen in one place, :func:`choose_backend`. A worker must live in an importable module (a function defined in
a notebook cannot be pickled); a module run as ``python -m pkg.mod`` may pass its own functions.
"""
from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from helpers.core import cli, procs
from helpers.core.rankenv import TorchrunResult, as_rank, env_rank, init_from_env, torchrun  # noqa: F401
from helpers.core.rankspawn import (RankContext, RankFailed, SpawnResult, choose_backend, free_port,  # noqa: F401
                                    importable, join_group, spawn)


def run(fn: Callable[..., Any], world_size: int, *args: Any, backend: str | None = None,
        timeout_s: float = 60.0) -> SpawnResult:
    """THE launcher: ``fn(ctx, *args)`` on every rank; a :class:`SpawnResult` with every rank's result in rank order.

    Under torchrun/srun (their environment present) this process is one rank and ``world_size`` is ignored: the
    launcher's ``WORLD_SIZE``/``SLURM_NTASKS`` decide (a worker that needs a given size checks ``ctx.world_size``
    and raises with the fix; :func:`world_size` gives the size before the start). Otherwise ``world_size`` local
    ranks are spawned; :class:`RankFailed` names a rank that raised, died or outlived ``timeout_s``."""
    if env_rank() is not None:
        return as_rank(fn, args, backend, timeout_s)
    return spawn(fn, world_size, *args, backend=backend, timeout_s=timeout_s)


def world_size(requested: int) -> int:
    """The world size :func:`run` will use: the launcher's under torchrun/srun, else ``requested``."""
    env = env_rank()
    return env[1] if env else int(requested)


def world_sizes(requested: Iterable) -> list[int]:
    """``--world-size 1,2 4`` as [1, 2, 4]; under torchrun/srun only the launcher's size (one job, one group)."""
    env = env_rank()
    if env:
        return [env[1]]
    flat: list[int] = []
    for x in requested:
        flat += world_sizes(x) if isinstance(x, (list, tuple)) else [int(x)]
    return flat


def is_leader() -> bool:
    """True in the process that reports: rank 0 under torchrun/srun, and the only process otherwise."""
    env = env_rank()
    return env is None or env[0] == 0


def emit(records: list[Any], kind: str, args: argparse.Namespace, columns: Sequence[str] | None = None,
         **meta: Any) -> dict[str, Any] | None:
    """``results.emit`` on the leader only (every rank holds the gathered records; one prints them)."""
    if not is_leader():
        return None
    from helpers.core import results

    return results.emit(records, kind, args, columns=columns, **meta)


def add_args(ap: argparse.ArgumentParser, world_size: int | None = 2, *, many: bool = False,
             backend: bool = True, timeout_s: float = 120.0, min_ranks: int = 1) -> None:
    """The options every distributed tool shares: ``--world-size`` (``many``: a list such as ``1,2`` or ``2 4``,
    read with :func:`world_sizes`; None: no such option, the tool derives it), ``--backend`` and ``--timeout``."""
    cli.run_tmpdir()          # under cli.run: inductor caches in a per-run folder, removed on exit and on signals
    ranks = _rank_count(max(1, min_ranks))
    note = "under torchrun/srun the launcher's world size is used"
    if world_size is None:
        pass
    elif many:
        ap.add_argument("--world-size", type=cli.csv_of(ranks), nargs="+", default=[[world_size]],
                        help=f"rank counts to spawn, one run each, e.g. 1,2 or 2 4 ({note})")
    else:
        ap.add_argument("--world-size", type=ranks, default=world_size, help=f"ranks to spawn ({note})")
    if backend:
        ap.add_argument("--backend", choices=["nccl", "gloo"], default=None,
                        help="default: NCCL when every rank has a GPU of its own, else gloo")
    ap.add_argument("--timeout", type=cli.timeout_s, default=timeout_s,
                    help="seconds before the ranks are stopped")


def _rank_count(lo: int) -> Callable[[str], int]:
    """``--world-size``'s type: lo..the most local ranks this machine runs in time, the limit's reason in the error."""
    n, why = procs.local_rank_limit()
    parse = cli.bounded_int(lo, n)

    def checked(text: str) -> int:
        try:
            return parse(text)
        except argparse.ArgumentTypeError as e:
            over = text.strip().isdigit() and int(text) > n
            raise argparse.ArgumentTypeError(f"{e} ({why})" if over else str(e)) from None
    checked.__name__ = parse.__name__
    return checked


# ------------------------------------------------------------------ hello world (smoke test for any setup)

def hello(ctx: RankContext) -> dict[str, Any]:
    """Each rank contributes rank+1; after all_reduce every rank holds n(n+1)/2."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([ctx.rank + 1.0], device=ctx.device)
    dist.all_reduce(t)
    return {"rank": ctx.rank, "world_size": ctx.world_size, "backend": ctx.backend, "device": ctx.device,
            "host": socket.gethostname(), "all_reduce_sum": float(t.item())}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m helpers launch --world-size 2`` (spawn) or ``torchrun --nproc_per_node=2 -m helpers launch``."""
    import json

    ap = argparse.ArgumentParser(prog="python -m helpers launch", description="distributed hello world")
    add_args(ap, 2, timeout_s=60.0)
    a = ap.parse_args(argv)
    res = run(hello, a.world_size, backend=a.backend, timeout_s=a.timeout)
    if is_leader():
        # one write: nothing of another process can come between the lines
        sys.stdout.write("\n".join([f"# {res.backend_reason}", *map(json.dumps, res.results)]) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
